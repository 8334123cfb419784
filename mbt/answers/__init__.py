"""`mbt eval` (issue 34, docs/user-guide.md "Judging answers"): golden questions with their expected answers, the
agent's actual answers from recorded runs, judged per criterion by mbt.judges; the report model and the gate."""
