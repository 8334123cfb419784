"""`mbt check`: span verification plus the static checks of each model's kind, as one sorted list of findings."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from mbt.analysis.findings import CheckOptions, Finding, check
from mbt.analysis.spans import check_spans
from mbt.kind import all_kinds
from mbt.model.common import Location, ModelBase
from mbt.parsing.loader import ModelFile


class _KindChecks(Mapping[str, Callable[..., list[Finding]]]):
    """Kind -> its checks, read from the registry (KindSupport.check): a view, never a second list of kinds."""

    def _checks(self) -> dict[str, Callable[..., list[Finding]]]:
        return {k.kind: k.check for k in all_kinds() if k.check is not None}

    def __getitem__(self, kind: str) -> Callable[..., list[Finding]]:
        return self._checks()[kind]

    def __iter__(self):
        return iter(self._checks())

    def __len__(self) -> int:
        return len(self._checks())


KIND_CHECKS = _KindChecks()

NOT_IMPORTED = check("IMP001", "not-imported", "warning",
                     "Part of a file in another tool's format could not be read, so it is left out: the rest of the "
                     "file is checked and measured without it.")


def import_warnings(file: ModelFile) -> list[Finding]:
    """What the file's importer left out (a DMN decision table it cannot read), each where it is."""
    return [Finding(code=NOT_IMPORTED.code, name=NOT_IMPORTED.name, severity="warning",
                    location=Location(file=w.path, line=w.line, column=w.column), message=w.message)
            for w in file.warnings]


def check_model(model: ModelBase, options: CheckOptions | None = None) -> list[Finding]:
    checker = KIND_CHECKS.get(model.kind)
    if checker is None:
        return []
    return checker(model, options or CheckOptions())


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: with a large model in memory each of its full passes walks every
    node, and the checks (which build many small closures and solver terms) would trigger hundreds of them."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def run_checks(files: list[ModelFile], options: CheckOptions | None = None) -> list[Finding]:
    """Every finding for the loaded files, sorted by (file, line, column, code)."""
    findings: list[Finding] = []
    with collector_paused():
        for file in files:
            findings.extend(check_spans(file))
            findings.extend(import_warnings(file))
            for model in file.models:
                findings.extend(check_model(model, options))
    return sorted(findings, key=lambda f: (f.location.file, f.location.line, f.location.column, f.code))


def has_errors(findings: list[Finding]) -> bool:
    """True when `mbt check` should exit 1."""
    return any(f.severity == "error" for f in findings)
