"""What the result store promises beyond its contents, on SQLite and PostgreSQL: an old store migrates, a newer one
is refused; two processes write at once; a killed or interrupted writer never leaves a set `done`; and the
password of the store's URL appears in no output, error, export or stored row."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from mbt.errors import MbtError
from mbt.store.db import Store
from mbt.store.query import CaseFilters, SetFilters, list_sets, show
from mbt.store.schema import CURRENT, metadata
from mbt.store.url import parse, resolve
from tests.cli_runner import run_mbt
from tests.data.store.make_v1 import write_v1
from tests.pg_server import PLANTED

ROOT = Path(__file__).resolve().parent.parent
V1_FILE = ROOT / "tests" / "data" / "store" / "results-v1.db"


def _engine_url(url: str) -> str:
    return parse(url, "test").url


def test_a_store_written_at_version_1_is_migrated_and_kept(store_url, tmp_path):
    if store_url.endswith(".db"):  # SQLite: the file version 1 wrote, as it is in the repository
        shutil.copy(V1_FILE, store_url)
    else:
        engine = create_engine(_engine_url(store_url))
        with engine.begin() as conn:
            write_v1(conn)
        engine.dispose()
    with Store(parse(store_url, "test")) as store:
        assert store.migrated == (1, CURRENT) and CURRENT == 3
        (found,) = list_sets(store, SetFilters()).sets
        assert (found.name, found.status, found.passed, found.failed) == ("qna_TestResult_20250106-083000", "done", 1, 1)
        view = show(store, found.name, CaseFilters(search="refund"))
        assert [(c.key, c.overall, c.criteria, c.first_deviation) for c in view.cases] == [
            ("qna/1", "fail", {"accuracy": "fail"}, None)]
        with store.read() as conn:  # the migrated tables are what the current code declares, column for column
            found_columns = {t: [c["name"] for c in inspect(conn).get_columns(t)] for t in metadata.tables}
            versions = conn.exec_driver_sql("SELECT version FROM mbt_schema").scalars().all()
        assert found_columns == {name: [c.name for c in table.columns] for name, table in metadata.tables.items()}
        assert versions == [CURRENT]
    from mbt import api

    # a migrated store takes new sets of either type, and opening it again migrates nothing
    api.runs_stored(["models/orders.fsm"], ["models/runs/transcripts/"], save="after", store=store_url)
    with Store(parse(store_url, "test")) as store:
        assert store.migrated == (CURRENT, CURRENT)
        assert [s.name for s in list_sets(store, SetFilters()).sets][-1] == "qna_TestResult_20250106-083000"


def test_a_store_newer_than_this_mbt_and_a_foreign_database_are_refused_untouched(store_url):
    with Store(parse(store_url, "test")):
        pass
    engine = create_engine(_engine_url(store_url))
    with engine.begin() as conn:
        conn.exec_driver_sql(f"UPDATE mbt_schema SET version = {CURRENT + 1}")
    with pytest.raises(MbtError, match=f"schema version {CURRENT + 1}; this mbt knows versions up to {CURRENT}"):
        Store(parse(store_url, "test"))
    with engine.begin() as conn:
        assert conn.exec_driver_sql("SELECT version FROM mbt_schema").scalar_one() == CURRENT + 1
        conn.exec_driver_sql("DROP TABLE mbt_schema")
    with pytest.raises(MbtError, match="no mbt_schema table: it is not an mbt result store"):
        Store(parse(store_url, "test"))
    engine.dispose()


# A writer in its own process: opens the store, writes `sets` sets of `cases` cases in batches of `batch`, saying
# "batch N" after each transaction; sleeps `pause` seconds between batches.
WRITER = textwrap.dedent("""
    import sys, time
    from mbt.store.db import Store
    from mbt.store.records import CaseRecord, NewSet
    from mbt.store.url import parse
    from mbt.store.write import SetWriter

    url, prefix, sets, cases, batch, pause = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6]), float(sys.argv[6])

    def record(n):
        verdict = "pass" if n % 3 else "fail"
        return CaseRecord(case_key=f"k/{n}", case_id=str(n), location="x", turns=1, question=f"q{n}", answer="a",
                          overall=verdict, search="q", doc={}, verdicts=[("accuracy", verdict, "r", "embedded")])

    with Store(parse(url, "test")) as store:
        for s in range(sets):
            with SetWriter(store, NewSet(f"{prefix}-{s}", "suite", "eval", "user:test", {}, {})) as writer:
                for number, start in enumerate(range(0, cases, batch), start=1):
                    writer.add([record(n) for n in range(start, min(start + batch, cases))], batch=batch)
                    print("batch", number, flush=True)
                    time.sleep(pause)
                writer.finish({})
    print("finished", flush=True)
""")


def _writer(url: str, prefix: str, sets: int, cases: int, batch: int, pause: float) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", WRITER, url, prefix, str(sets), str(cases), str(batch), str(pause)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def test_two_processes_write_into_one_store_at_once(store_url):
    with Store(parse(store_url, "test")):
        pass  # made and migrated first, as the first command would (migrating at once is tested below)
    writers = [_writer(store_url, name, 2, 1500, 50, 0.0) for name in ("left", "right")]
    for w in writers:
        out, err = w.communicate(timeout=240)
        assert w.returncode == 0, err
        assert out.strip().endswith("finished")
    with Store(parse(store_url, "test")) as store:
        found = {s.name: s for s in list_sets(store, SetFilters()).sets}
        assert sorted(found) == ["left-0", "left-1", "right-0", "right-1"]
        assert all(s.status == "done" and s.cases_total == 1500 and s.failed == 500 for s in found.values())
        view = show(store, "right-1", CaseFilters(limit=None))
        assert [c.seq for c in view.cases] == list(range(1, 1501))  # each set's cases whole and in order


def test_two_processes_opening_a_new_store_migrate_it_once(store_url):
    writers = [_writer(store_url, name, 1, 10, 5, 0.0) for name in ("a", "b")]
    for w in writers:
        _, err = w.communicate(timeout=120)
        assert w.returncode == 0, err
    with Store(parse(store_url, "test")) as store, store.read() as conn:
        assert conn.exec_driver_sql("SELECT version FROM mbt_schema").scalars().all() == [CURRENT]


def _wait_for(process: subprocess.Popen, line: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        said = process.stdout.readline()
        if said.strip() == line:
            return
        if not said and process.poll() is not None:
            raise AssertionError(f"the writer ended before `{line}`: {process.stderr.read() if process.stderr else ''}")
    raise AssertionError(f"no `{line}` in {timeout} s")


@pytest.mark.parametrize("how, status", [(signal.SIGKILL, "running"), (signal.SIGINT, "cancelled")])
def test_a_writer_stopped_midway_never_leaves_a_set_done(store_url, how, status):
    writer = _writer(store_url, "stopped", 1, 10_000, 100, 0.2)
    _wait_for(writer, "batch 3")
    writer.send_signal(how)
    writer.wait(timeout=60)
    with Store(parse(store_url, "test")) as store:
        (found,) = list_sets(store, SetFilters()).sets
        assert found.status == status
        assert (found.ended_at is None) == (status == "running")
        with store.read() as conn:
            written = conn.exec_driver_sql("SELECT count(*) FROM cases").scalar_one()
            judged = conn.exec_driver_sql("SELECT count(*) FROM verdicts").scalar_one()
        assert written >= 300 and written % 100 == 0 and judged == written  # whole batches only
        if status == "cancelled":
            assert found.error == "interrupted (Ctrl-C)"
    listed = run_mbt("results", "list", "--status", status, "--store", store_url)
    assert "stopped-0" in listed.stdout and listed.returncode == 0


def test_an_error_while_writing_marks_the_set_failed_with_why(store_url):
    from mbt.store.records import CaseRecord, NewSet
    from mbt.store.write import SetWriter

    with Store(parse(store_url, "test")) as store:
        with pytest.raises(RuntimeError), SetWriter(store, NewSet("broken", "s", "eval", "u", {}, {})) as writer:
            writer.add([CaseRecord("k/1", "1", "x", 1, "q", "a", "pass", "q", {})])
            raise RuntimeError("the judge's server went away")
        (found,) = list_sets(store, SetFilters()).sets
        assert (found.status, found.error) == ("failed", "RuntimeError: the judge's server went away")


def _everything_stored(url: str) -> str:
    """Every value of every table of the store, as text."""
    engine = create_engine(_engine_url(url))
    with engine.connect() as conn:
        parts = [json.dumps([list(map(str, row)) for row in conn.execute(text(f"SELECT * FROM {table}"))])
                 for table in ("mbt_schema", "result_sets", "cases", "verdicts")]
    engine.dispose()
    return "\n".join(parts)


def test_the_store_password_is_never_shown_or_stored(pg_server, tmp_path, monkeypatch):
    url = pg_server.url(pg_server.new_database())
    forms = (PLANTED, quote(PLANTED, safe=""), quote(PLANTED))
    assert PLANTED in make_url(_engine_url(url)).password
    assert not any(f in str(make_url(_engine_url(url))) or f in repr(make_url(_engine_url(url))) for f in forms)
    assert not any(f in resolve(url).shown for f in forms)
    outputs = []
    export = tmp_path / "export.json"
    workbook = tmp_path / "export.xlsx"
    runs = [
        run_mbt("eval", "--goldens", "models/answers/goldens/", "--runs", "models/answers/runs/", "--save", "qna",
                "--store", url),
        run_mbt("eval", "--goldens", "models/answers/goldens/", "--runs", "models/answers/runs/", "--format", "json",
                "--baseline-set", "qna", env={"MBT_STORE_URL": url}),
        run_mbt("runs", "--model", "models/orders.fsm", "--runs", "models/runs/", "--save", "--store", url),
        run_mbt("results", "list", "--store", url),
        run_mbt("results", "list", "--format", "json", env={"MBT_STORE_URL": url}),
        run_mbt("results", "show", "qna", "--store", url),
        run_mbt("results", "show", "qna", "--case", "card-qna/3", "--format", "json", "--store", url),
        run_mbt("results", "compare", "qna", "qna", "--sessions", "--store", url),
        run_mbt("results", "export", "qna", "-o", str(export), "--store", url),
        run_mbt("results", "export", "qna", "-o", str(workbook), "--store", url),
        run_mbt("results", "show", "no-such-set", "--store", url),  # an error naming the store
        run_mbt("results", "rename", "qna", "qna", "--store", url),
        # a refused connection: the right password to a port nothing listens on, and a wrong password
        run_mbt("results", "list", "--store", url.replace(f":{pg_server.port}/", ":1/")),
        run_mbt("results", "list", "--store", pg_server.url("postgres", password=PLANTED + "x")),
    ]
    for done in runs:
        outputs += [done.stdout, done.stderr]
    assert [r.returncode for r in runs] == [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 2]
    assert "error: no result set named `no-such-set` in the store postgresql+psycopg://mbt:***@127.0.0.1" in runs[10].stderr
    assert runs[12].stderr.startswith("error: result store postgresql+psycopg://mbt:***@127.0.0.1:1/")
    assert "password authentication failed" in runs[13].stderr
    import zipfile

    with zipfile.ZipFile(workbook) as book:
        outputs += [book.read(name).decode("utf-8", "replace") for name in book.namelist()]
    outputs += [export.read_text(encoding="utf-8"), _everything_stored(url), pg_server.log.read_text(errors="replace")]
    for out in outputs:
        for form in forms:
            assert form not in out
    # the configuration file may not hold one (it is shared): refused, and the message does not repeat it
    (tmp_path / "mbt.yaml").write_text(f"store: {url}\n", encoding="utf-8")
    refused = run_mbt("results", "list", cwd=tmp_path)
    assert refused.returncode == 2 and "`store`: the URL holds a password" in refused.stderr
    assert not any(f in refused.stderr + refused.stdout for f in forms)
    # without its password in the file, the URL works with the password from libpq's environment
    (tmp_path / "mbt.yaml").write_text(f"store: {url.replace(':' + quote(PLANTED, safe=''), '')}\n", encoding="utf-8")
    listed = run_mbt("results", "list", cwd=tmp_path, env={"PGPASSWORD": PLANTED})
    assert listed.returncode == 0 and "qna" in listed.stdout
