"""Independent judges of docs/coverage-rules.md: slow, obviously-correct re-implementations of "exercised" and
"verified" per kind, sharing no code with mbt's replay bookkeeping, run differentially against `mbt coverage`."""
