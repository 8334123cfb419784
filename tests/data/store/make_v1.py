"""Writes results-v1.db: a result store at schema version 1 holding one finished eval set of two cases, as mbt wrote
stores before version 2 (tests/test_store_safety.py migrates it). Kept as a file so that the test reads what version 1
wrote, whatever later edits do; rerun only to rebuild it on purpose: `python tests/data/store/make_v1.py`."""

from __future__ import annotations

import sys
from pathlib import Path

from sqlalchemy import create_engine

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from mbt.store.schema import MIGRATIONS, migrate  # noqa: E402

V1_SET = ("INSERT INTO result_sets (name, suite, status, run_type, started_at, ended_at, executor, agent_version, "
          "judge, summary, meta, cases_total, passed, failed, not_judged, errors) VALUES ('qna_TestResult_20250106-"
          "083000', 'qna', 'done', 'eval', '2025-01-06T08:30:00Z', '2025-01-06T08:31:00Z', 'user:alice', '1.4', "
          "'{\"criteria\":{\"accuracy\":\"1\"},\"judge\":\"embedded\",\"threshold\":\"0\"}', '{}', "
          "'{\"mbt_version\":\"0.1.0\"}', 2, 1, 1, 0, 0)")
V1_CASES = ("INSERT INTO cases (set_id, seq, case_key, case_id, location, turns, question, answer, overall, "
            "agent_version, search) VALUES "
            "(1, 1, 'qna/1', '1', 'qna.csv:2', 1, 'How long does a refund take?', '7 days.', 'fail', '1.4', "
            "'how long does a refund take?\n7 days.'), "
            "(1, 2, 'qna/2', '2', 'qna.csv:3', 1, 'Can I unlock my card?', 'Yes.', 'pass', '1.4', "
            "'can i unlock my card?\nyes.')")
V1_DOCS = ("INSERT INTO case_docs (case_row, set_id, doc) VALUES (1, 1, '{\"id\":\"1\",\"transcript\":null}'), "
           "(2, 1, '{\"id\":\"2\",\"transcript\":null}')")
V1_VERDICTS = ("INSERT INTO verdicts (case_row, set_id, criterion, verdict, reason, judge) VALUES "
               "(1, 1, 'accuracy', 'fail', 'expected 5 days, the answer says 7 days', 'embedded'), "
               "(2, 1, 'accuracy', 'pass', 'the answer is the expected answer', 'embedded')")


def write_v1(conn) -> None:
    """Schema version 1 and its rows, on an open transaction of an empty database (SQLite or PostgreSQL); the
    ids are the database's own (1 and 2 in an empty one), as mbt's inserts leave them."""
    migrate(conn, MIGRATIONS[:1])
    for statement in (V1_SET, V1_CASES, V1_DOCS, V1_VERDICTS):
        conn.exec_driver_sql(statement)


if __name__ == "__main__":
    target = Path(__file__).with_name("results-v1.db")
    target.unlink(missing_ok=True)
    engine = create_engine(f"sqlite:///{target}")
    with engine.begin() as conn:
        write_v1(conn)
    engine.dispose()
    print(target)
