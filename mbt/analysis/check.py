"""`mbt check`: span verification plus the static checks of each model's kind, as one sorted list of findings."""

from __future__ import annotations

import gc
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mbt.analysis.explore import MAX_CONFIGURATIONS
from mbt.analysis.findings import Finding
from mbt.analysis.fsm_checks import check_fsm
from mbt.analysis.invariant_checks import DEFAULT_DEPTH, check_invariants
from mbt.analysis.policy_checks import check_policy
from mbt.analysis.spans import check_spans
from mbt.analysis.table_checks import check_table
from mbt.model.common import ModelBase
from mbt.parsing.loader import ModelFile

# One entry per model kind; "table", "policy" and "invariant" plug in here when their checks exist.
KIND_CHECKS: dict[str, Callable[[ModelBase], list[Finding]]] = {
    "fsm": check_fsm,
    "invariant": check_invariants,
    "policy": check_policy,
    "table": check_table,
}


@dataclass(frozen=True)
class CheckOptions:
    """Settings of `mbt check`; a kind's check receives them when it takes an `options` parameter."""

    depth: int = DEFAULT_DEPTH  # how many steps the invariant checks explore
    max_configurations: int = MAX_CONFIGURATIONS  # where the invariant checks' exploration stops (INV004)


def check_model(model: ModelBase, options: CheckOptions | None = None) -> list[Finding]:
    checker = KIND_CHECKS.get(model.kind)
    if checker is None:
        return []
    if "options" in inspect.signature(checker).parameters:
        return checker(model, options=options or CheckOptions())
    return checker(model)


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
            for model in file.models:
                findings.extend(check_model(model, options))
    return sorted(findings, key=lambda f: (f.location.file, f.location.line, f.location.column, f.code))


def has_errors(findings: list[Finding]) -> bool:
    """True when `mbt check` should exit 1."""
    return any(f.severity == "error" for f in findings)
