"""Golden cases: loading (JSONL/YAML, seed 000's formats), binding turns to events, and replay on models."""
