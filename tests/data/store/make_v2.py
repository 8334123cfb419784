"""Writes results-v2.db: a result store at schema version 2 as mbt wrote it before the LLM judges' usage had tables
of its own (schema version 3). It holds two finished eval sets of the four cases of models/answers: `qna-llm`, judged
by an LLM judge (a scripted local server: 1000 input and 10 output tokens a reply, priced at $2.5 / $10 per million,
`--max-requests 3`, so its summary holds `judge_usage` and `budget`), and `qna-embedded`, judged by the embedded judge
(no LLM judge: nothing to cost). tests/test_store_usage.py migrates it.

It was written by `mbt eval --save` itself, at commit 69f3048 (schema version 2), and is kept as a file so that the
test reads what that mbt wrote, whatever later edits do. Rerun only to rebuild it on purpose, with an mbt of schema
version 2 (a later mbt writes its own version): `python tests/data/store/make_v2.py`. `write_v2` copies its rows
into another database (PostgreSQL) built with the shipped version 1 and 2 steps.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sqlalchemy import MetaData, create_engine, select

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from mbt.store.schema import MIGRATIONS, migrate  # noqa: E402

V2_FILE = Path(__file__).with_name("results-v2.db")


def write_v2(conn) -> None:
    """Schema version 2 and results-v2.db's rows, on an open transaction of an empty database (SQLite or
    PostgreSQL): each row inserted without its id, so the database numbers them as mbt's inserts leave them."""
    migrate(conn, MIGRATIONS[:2])
    source = create_engine(f"sqlite:///{V2_FILE}")
    found, target = MetaData(), MetaData()
    with source.connect() as read:
        found.reflect(read)
        target.reflect(conn, only=["result_sets", "cases", "case_docs", "verdicts"])
        set_ids: dict[int, int] = {}
        case_ids: dict[int, int] = {}
        for row in read.execute(select(found.tables["result_sets"]).order_by("id")).mappings():
            values = {k: v for k, v in row.items() if k != "id"}
            set_ids[row["id"]] = conn.execute(target.tables["result_sets"].insert().values(**values)
                                              .returning(target.tables["result_sets"].c.id)).scalar_one()
        for row in read.execute(select(found.tables["cases"]).order_by("id")).mappings():
            values = {**{k: v for k, v in row.items() if k != "id"}, "set_id": set_ids[row["set_id"]]}
            case_ids[row["id"]] = conn.execute(target.tables["cases"].insert().values(**values)
                                               .returning(target.tables["cases"].c.id)).scalar_one()
        for table in ("case_docs", "verdicts"):
            rows = [{**row, "case_row": case_ids[row["case_row"]], "set_id": set_ids[row["set_id"]]}
                    for row in read.execute(select(found.tables[table])).mappings()]
            conn.execute(target.tables[table].insert(), rows)
    source.dispose()


def _make() -> None:
    from mbt import api
    from mbt.judges.llm import llm_settings
    from tests.chat_server import ChatServer, completion

    def script(n, body, headers):
        return completion('{"verdict": "pass", "reason": "scripted"}', prompt_tokens=1000, completion_tokens=10)

    V2_FILE.unlink(missing_ok=True)
    os.environ["SOURCE_DATE_EPOCH"] = "1736152200"  # 2025-01-06T08:30:00Z: the sets' times
    os.chdir(ROOT)  # the sets' meta names the inputs as given: relative to the repository
    goldens, runs = ["models/answers/goldens/"], ["models/answers/runs/"]
    with ChatServer(script) as server:
        settings = llm_settings({"base_url": server.base_url, "concurrency": 1, "cache": False, "max_requests": 3,
                                 "prices": {"judge-model": (2.5, 10.0)}}, None, {"OPENAI_API_KEY": "sk-test"})
        api.eval_stored(goldens, runs, save="qna-llm", store=str(V2_FILE), judge="openai:judge-model", llm=settings)
    api.eval_stored(goldens, runs, save="qna-embedded", store=str(V2_FILE))
    print(V2_FILE)


if __name__ == "__main__":
    _make()
