"""The result store (issue 35): every `mbt eval` / `mbt runs` result set kept in a real database, SQLite by default
and PostgreSQL by URL, through SQLAlchemy Core; listed, shown, exported, renamed, deleted and compared
(`mbt results`). docs/results.md describes it."""
