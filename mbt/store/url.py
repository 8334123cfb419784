"""Which store a command uses, and how it is shown.

The store is named by `--store URL`, else the environment variable MBT_STORE_URL, else the configuration file's
`store` key, else the SQLite file `.mbt/results.db` in the working folder. A value without `://` is a SQLite file's
path; `sqlite:///PATH` is one too; `postgresql://...` (or `postgres://`, `postgresql+psycopg://`) is a PostgreSQL
server reached with psycopg 3.

Credentials come only from the URL (or libpq's own environment: PGPASSWORD, ~/.pgpass). The URL is never shown
with its password: `shown` renders it as SQLAlchemy does with the password hidden, and `scrub` takes the password
out of any text (a driver's error message) before mbt prints it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import quote

from mbt.errors import MbtError

ENV_VAR = "MBT_STORE_URL"
DEFAULT_PATH = ".mbt/results.db"
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")


@dataclass(frozen=True)
class StoreUrl:
    """A store's address: the SQLAlchemy URL text (with its password, never printed) and its dialect."""

    url: str
    dialect: str  # sqlite | postgresql
    origin: str  # where it came from: --store, MBT_STORE_URL, the configuration file, the default

    @property
    def shown(self) -> str:
        """The URL as messages and reports show it: the password replaced by ***."""
        from sqlalchemy.engine import make_url

        return make_url(self.url).render_as_string(hide_password=True)

    @property
    def password(self) -> str | None:
        from sqlalchemy.engine import make_url

        return make_url(self.url).password

    def scrub(self, text: str) -> str:
        """`text` without the password in any form a driver may print it (as given, or percent-encoded)."""
        secret = self.password
        if not secret:
            return text
        for form in {secret, quote(secret, safe=""), quote(secret)}:
            text = text.replace(form, "***")
        return text


def resolve(given: str | None, configured: str | None = None) -> StoreUrl:
    """The store named by `--store` (`given`), MBT_STORE_URL, the configuration file's `store`, or the default."""
    if given:
        return parse(given, "--store")
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return parse(env, ENV_VAR)
    if configured:
        return parse(configured, "the configuration file's `store`")
    return parse(DEFAULT_PATH, "the default")


def parse(text: str, origin: str) -> StoreUrl:
    """A store URL or a SQLite file path as SQLAlchemy's URL text; MbtError for a scheme mbt does not speak."""
    text = text.strip()
    if "://" not in text:
        if not text:
            raise MbtError(f"{origin}: an empty store; give a SQLite file or a postgresql:// URL")
        return StoreUrl(f"sqlite:///{text}", "sqlite", origin)
    scheme, _, rest = text.partition("://")
    scheme = scheme.lower()
    if scheme in ("sqlite", "sqlite+pysqlite"):
        return StoreUrl(f"sqlite://{rest}", "sqlite", origin)
    if scheme in POSTGRES_SCHEMES:
        return StoreUrl(f"postgresql+psycopg://{rest}", "postgresql", origin)
    # The scheme alone is shown: the rest may hold a password.
    raise MbtError(f"{origin}: a store URL of scheme `{scheme}`; mbt keeps results in SQLite (a file path or "
                   "sqlite:///PATH) or PostgreSQL (postgresql://USER@HOST/DB)")

