"""`mbt generate`: skeletons for exactly the coverage gaps (or a full suite), checked, then written under --out.

Per FSM model: the uncovered elements (from replaying the goldens) each get a witness (mbt.generate.witnesses), or a
full suite is built (mbt.generate.suites); each run becomes a skeleton whose expectations come from the replay engine;
the skeleton's golden-case stub is replayed as `mbt coverage` would read it and its pytest test is run on the
reference machine, and only then are the files written, all at the end (mbt.generate.files).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from mbt.elements.base import Element
from mbt.errors import MbtError
from mbt.generate.adapter import ReferenceAdapter
from mbt.generate.decisions import DecisionSearch
from mbt.generate.enforced import enforcements_of
from mbt.generate.files import OutputFile, write_outputs
from mbt.generate.invariants import InvariantWitnesses, fsm_of
from mbt.generate.report import (
    GeneratedTest,
    GenerateReport,
    MissingWitness,
    ModelGeneration,
    SuiteFigures,
    WrittenFile,
)
from mbt.generate.skeleton import Skeleton, SkeletonBuilder, test_name
from mbt.generate.suites import SuiteBuilder
from mbt.generate.support import support_source
from mbt.generate.witnesses import DEFAULT_MAX_DEPTH, DEFAULT_MAX_PATHS, NoWitness, WitnessFinder
from mbt.generate.writers import (
    DriverCall,
    GeneratedFunction,
    conftest_source,
    fsm_calls,
    render_jsonl,
    render_pytest,
)
from mbt.goldens.loader import GoldenSet
from mbt.kind import Generator, SuiteGenerator, all_kinds, support
from mbt.measure.coverage import ElementCoverage, GoldenSummary
from mbt.measure.run import measure
from mbt.model.common import ModelBase
from mbt.model.fsm import FsmModel
from mbt.model.invariant import InvariantModel

M = TypeVar("M", bound=ModelBase)
W = TypeVar("W")  # what a kind's witness search finds for an element


@dataclass
class GenerateOptions:
    criteria: list[str] | None = None  # gaps of these criteria only (None: every criterion)
    suite: str | None = None  # `--all --criterion C`: a full suite for C instead of the gaps
    max_depth: int = DEFAULT_MAX_DEPTH
    max_paths: int = DEFAULT_MAX_PATHS
    preconditions: list[dict[str, Any]] = field(default_factory=list)
    force: bool = False
    # Every model generated together: an FSM's witnesses make the requests that the policies enforcing its tool
    # calls accept (mbt/generate/enforced.py).
    models: list[ModelBase] = field(default_factory=list)
    # Called with 1 as each model is done (a progress bar on a terminal; mbt.progress).
    advance: Callable[[int], None] | None = None
    # The text of the summary file written beside the tests (summary.MODE.txt), from the report before its files are
    # written: the api passes the text reporter, so generation formats nothing itself. None: no summary file.
    summary: Callable[[GenerateReport], str] | None = None


def generate(models: list[ModelBase], goldens: GoldenSet, out: str, options: GenerateOptions) -> GenerateReport:
    suited = list(dict.fromkeys(c for k in all_kinds() for c in k.suites))  # every kind's suite criteria
    if options.suite is not None and options.suite not in suited:
        raise MbtError(f"--all builds suites for {' or '.join(suited)}, not {options.suite!r}")
    rows: dict[str, list[ElementCoverage]] = {}
    results: list[ModelGeneration] = []
    files: list[OutputFile] = []
    measured: tuple[GoldenSummary, list[str]] | None = None
    if options.suite is None:
        coverage = measure(models, goldens)
        rows = {m.model: m.elements for m in coverage.models}
        measured = coverage.goldens, [f"{i.file}:{i.line}: {i.message}" for i in coverage.invalid_cases]
    mode = "gaps" if options.suite is None else f"suite-{options.suite}"
    options.models = list(models)
    for model in models:
        kind = support(model.kind)
        if kind.generation is None or (options.suite is not None and options.suite not in kind.suites):
            kinds = " and ".join(k.kind for k in all_kinds() if options.suite in k.suites)
            note = (f"full suites are for {kinds} models; `{model.kind}` models get a test per gap (without --all)"
                    if kind.generation is not None else f"generation for `{model.kind}` models is not supported yet")
            results.append(ModelGeneration(model=model.name, kind=model.kind, file=model.file, mode=mode, uncovered=0,
                                           note=note))
            continue
        gen = kind.generation(model, options, out)
        results.append(gen.gaps(rows[model.name]) if options.suite is None
                       else suite_generator(gen, model.kind).full_suite(options.suite))
        files += gen.files(mode)
        if options.advance is not None:
            options.advance(1)
    return finish(out, mode, results, files, options, measured)


def suite_generator(gen: Generator, kind: str) -> SuiteGenerator:
    """The generator of a kind that declares `suites`: it builds them (a plug-in kind that says so and does not is
    told here, rather than by an AttributeError)."""
    if not isinstance(gen, SuiteGenerator):
        raise TypeError(f"the {kind} kind declares suites, and its generator has no `full_suite`")
    return gen


def finish(out: str, mode: str, results: list[ModelGeneration], files: list[OutputFile],
           options: GenerateOptions, measured: tuple[GoldenSummary, list[str]] | None = None) -> GenerateReport:
    """The shared files (fixture, driver, summary) added, everything written under `out`: the report. `measured`:
    the goldens' figures and invalid cases, as mbt coverage counts them (None: no goldens were measured)."""
    if any(f.path.endswith(".py") for f in files):
        files.append(OutputFile("tests/conftest.py", conftest_source(), "the pytest fixture of generated tests"))
        files.append(OutputFile("tests/mbt_support.py", support_source(), "the driver generated tests run on"))
    report = GenerateReport(out=str(out), max_depth=options.max_depth, models=results)
    if measured is not None:
        report.goldens, report.invalid_cases = measured
    if options.summary is not None:
        files.append(OutputFile(f"summary.{mode}.txt", options.summary(report),
                                f"what `mbt generate` made ({mode}) and what it could not"))
    written = write_outputs(out, files, options.force)
    report.files = [WrittenFile(path=w.path, status=w.status, beside=w.beside) for w in written]
    return report


def check_precondition(model: FsmModel, pre: dict[str, Any]) -> None:
    """A declared precondition must name the model's state and variables with values of their types."""
    for key, value in pre.items():
        if key == "state":
            if not isinstance(value, str):
                raise MbtError(f"--precondition `state: {value!r}` must be a state name of model `{model.name}`")
            if value not in model.states:
                raise MbtError(f"--precondition names unknown state {value!r} of model `{model.name}`")
        elif key.startswith("discarded."):
            # A golden's precondition sets the state and variables only: a stub could not start from it.
            raise MbtError(f"--precondition `{key}`: a precondition sets the state and variables, "
                           "not discarded values")
        elif key not in model.variables:
            raise MbtError(f"--precondition names `{key}`, which is not a variable of model `{model.name}`")
        elif not model.variables[key].type.admits(value):
            raise MbtError(f"--precondition `{key}: {value!r}` is not a value of "
                           f"{model.variables[key].type.text()} (model `{model.name}`)")


class FsmGeneration:
    """Generation for one FSM model: witnesses or a suite, skeletons, checks, and the model's files."""

    def __init__(self, model: FsmModel, options: GenerateOptions, out: str):
        for pre in options.preconditions:
            check_precondition(model, pre)
        self.model = model
        self.options = options
        self.out = out
        self.elements: list[Element] = support("fsm").elements(model)
        self.by_id = {e.id: e for e in self.elements}
        enforcements = enforcements_of(model, options.models)
        self.finder = WitnessFinder(model, list(options.preconditions), options.max_depth, options.max_paths,
                                    enforcements=enforcements)
        # Where no run makes a request the enforcing policies permit, one they can take (the stub then shows the
        # refusal as a contradiction, a finding about the two models, rather than being an invalid case).
        self.relaxed = WitnessFinder(model, list(options.preconditions), options.max_depth, options.max_paths,
                                     enforcements=enforcements, permitted=False) if enforcements else None
        self.builder = SkeletonBuilder(model, self.elements)
        self.skeletons: list[Skeleton] = []
        self.stubs: list[dict[str, Any]] = []
        self.docs: dict[str, str] = {}
        self.names: set[str] = set()
        self.suite_figures: SuiteFigures | None = None

    # ------------------------------------------------------------ gaps
    def gaps(self, rows: list[ElementCoverage]) -> ModelGeneration:
        wanted = [r for r in rows if not r.verified and (not self.options.criteria
                                                          or r.element.criterion in self.options.criteria)]
        result = ModelGeneration(model=self.model.name, kind="fsm", file=self.model.file, mode="gaps",
                                 uncovered=len(wanted))
        for row in wanted:
            e = row.element
            if not e.feasible:
                result.missing.append(missing(e, "infeasible", f"infeasible: {e.reason}"))
                continue
            found = self.finder.find(e.id)
            if isinstance(found, NoWitness) and self.relaxed is not None:
                found = self.relaxed.find(e.id)
            if isinstance(found, NoWitness):
                result.missing.append(missing(e, found.reason, found.message))
                continue
            forbid_at = {len(found.plan) - 1: e.id} if e.criterion == "forbidden" else None
            problem = self.add(test_name(e.id, self.names), f"gen:{self.model.name}:{e.id}", [e.id],
                               found.start.precondition, found.events, forbid_at, row.exercised_by, None)
            if problem is not None:
                result.missing.append(missing(e, *problem))
        result.tests = [self.summary(sk) for sk in self.skeletons]
        return result

    # ------------------------------------------------------------ full suites
    def full_suite(self, criterion: str) -> ModelGeneration:
        # A suite must take every transition it can: its calls need only be requests the policies can take.
        suite = SuiteBuilder(self.relaxed or self.finder).build(criterion)
        result = ModelGeneration(model=self.model.name, kind="fsm", file=self.model.file, mode=f"suite-{criterion}",
                                 uncovered=suite.items)
        width = max(3, len(str(len(suite.runs))))
        for n, run in enumerate(suite.runs, start=1):
            label = f"suite_{criterion.replace('-', '_')}_{n:0{width}d}"
            name = f"test_{label}"
            self.names.add(name)
            problem = self.add(name, f"gen:{self.model.name}:suite-{criterion}-{n:0{width}d}", run.covers,
                               run.start.precondition, run.events, None, [], (criterion, n, len(suite.runs)))
            if problem is not None:
                raise MbtError(f"suite run {n} of `{self.model.name}` failed its check ({problem[1]}); "
                               "this is an mbt bug, please report it")
        for m in suite.missing:
            e = self.by_id.get(m.element)
            if e is not None:
                result.missing.append(missing(e, m.reason, m.message))
        self.suite_figures = SuiteFigures(criterion=criterion, method=suite.method,
                                          strongly_connected=suite.strongly_connected, elements=suite.items,
                                          lower_bound=suite.lower_bound, optimum_steps=suite.optimum_steps,
                                          optimum_tests=suite.optimum_tests, steps=suite.steps,
                                          tests=len(suite.runs), exact=suite.exact is not None,
                                          configurations=suite.exact, guarded_lower_bound=suite.guarded_lower_bound,
                                          searched=suite.searched, no_exact=suite.no_exact)
        result.suite = self.suite_figures
        result.tests = [self.summary(sk) for sk in self.skeletons]
        return result

    # ------------------------------------------------------------ one skeleton, checked
    def add(self, name: str, case_id: str, element_ids: list[str], precondition: dict[str, Any],
            events: list[tuple[str, dict[str, Any]]], forbid_at: dict[int, str] | None, exercised_by: list[str],
            suite: tuple[str, int, int] | None) -> tuple[str, str] | None:
        """Build, check and keep one skeleton; (reason, message) when it cannot be kept."""
        events = self.builder.words.fit(precondition, events)  # values the model's bindings can say: user words
        sk = self.builder.build(name, case_id, element_ids, precondition, events, forbid_at)
        sk.exercised_by = list(exercised_by)
        stub = self.builder.stub(sk)
        problem = self.builder.check_stub(sk, stub)
        if problem is not None:
            return "replay", problem + " (an mbt bug, please report it)"
        problem = self.builder.check_test(sk, ReferenceAdapter(self.model))
        if problem is not None:
            if forbid_at:
                # Without the forbid check the run passes: the model itself shows the forbidden behaviour.
                plain = dataclasses.replace(sk, steps=[dataclasses.replace(s, forbid=None) for s in sk.steps])
                if self.builder.check_test(plain, ReferenceAdapter(self.model)) is None:
                    return "model", (f"the model itself does what this forbid forbids on the witness run ({problem}); "
                                     "`mbt check` reports the transition (FSM007)")
            return "replay", f"the test fails on the reference machine: {problem} (an mbt bug, please report it)"
        self.skeletons.append(sk)
        self.stubs.append(stub)
        self.docs[name] = test_doc(sk, suite)
        return None

    def summary(self, sk: Skeleton) -> GeneratedTest:
        return GeneratedTest(name=sk.name, case_id=sk.case_id, elements=[e.id for e in sk.elements],
                             steps=len(sk.steps), precondition=dict(sk.precondition),
                             events=[call_text(s.event, s.args) for s in sk.steps])

    # ------------------------------------------------------------ files
    def files(self, mode: str) -> list[OutputFile]:
        tests: list[GeneratedFunction] = [{"name": sk.name, "doc": self.docs[sk.name], "calls": fsm_calls(sk)}
                                          for sk in self.skeletons]
        return model_files(self.model, self.out, mode, tests, self.stubs)


class GapGeneration(Generic[M, W]):
    """Generation of one test per uncovered element for kinds without full suites (tables, policies, invariants):
    subclasses find a witness per element (`find`) and turn it into a test and a stub (`add`)."""

    def __init__(self, model: M, options: GenerateOptions, out: str):
        self.model, self.options, self.out = model, options, out
        self.elements: list[Element] = support(model.kind).elements(model)
        self.tests: list[GeneratedFunction] = []
        self.stubs: list[dict[str, Any]] = []
        self.names: set[str] = set()

    def find(self, element: str) -> W | NoWitness:
        raise NotImplementedError

    def add(self, row: ElementCoverage, found: W, result: ModelGeneration) -> None:
        raise NotImplementedError

    def gaps(self, rows: list[ElementCoverage]) -> ModelGeneration:
        wanted = [r for r in rows if not r.verified and (not self.options.criteria
                                                          or r.element.criterion in self.options.criteria)]
        result = ModelGeneration(model=self.model.name, kind=self.model.kind, file=self.model.file, mode="gaps",
                                 uncovered=len(wanted))
        for row in wanted:
            e = row.element
            if not e.feasible:
                result.missing.append(missing(e, "infeasible", f"infeasible: {e.reason}"))
                continue
            found = self.find(e.id)
            if isinstance(found, NoWitness):
                result.missing.append(missing(e, found.reason, found.message))
                continue
            self.add(row, found, result)
        return result

    def files(self, mode: str) -> list[OutputFile]:
        return model_files(self.model, self.out, mode, self.tests, self.stubs)


class DecisionGeneration(GapGeneration[M, dict[str, Any]]):
    """Generation for a decision table or a policy: a witness input (request) per uncovered element, found by the
    kind's DecisionWitnesses (mbt/generate/decisions.py), made by `witnesses` from the model and its elements."""

    def __init__(self, model: M, options: GenerateOptions, out: str,
                 witnesses: Callable[[M, list[Element]], DecisionSearch]):
        super().__init__(model, options, out)
        self.witnesses = witnesses(model, self.elements)

    def find(self, element: str) -> dict[str, Any] | NoWitness:
        return self.witnesses.find(element)

    def add(self, row: ElementCoverage, found: dict[str, Any], result: ModelGeneration) -> None:
        e = row.element
        name = test_name(e.id, self.names)
        case_id = f"gen:{self.model.name}:{e.id}"
        call = self.witnesses.call(found)
        self.stubs.append({"id": case_id, **stub_notes(e), **found})
        self.tests.append({"name": name, "doc": decision_doc(e, row.exercised_by, call), "calls": [call]})
        result.tests.append(GeneratedTest(name=name, case_id=case_id, elements=[e.id], steps=1,
                                          events=[f"{call['method']}({call['args'][0]!r}, {call['args'][1]!r})"]))


# An invariant's witness: the golden stub, and the run of its FSM as (event, arguments).
InvariantWitness = tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]


class InvariantGeneration(GapGeneration[InvariantModel, InvariantWitness]):
    """Generation for invariants: a run of their FSM that triggers each untested invariant and asserts it."""

    def __init__(self, model: InvariantModel, options: GenerateOptions, out: str):
        super().__init__(model, options, out)
        self.fsm = fsm_of(model)
        self.witnesses = InvariantWitnesses(model, self.elements, options.max_depth)

    def find(self, element: str) -> InvariantWitness | NoWitness:
        return self.witnesses.find(element)

    def add(self, row: ElementCoverage, found: InvariantWitness, result: ModelGeneration) -> None:
        e = row.element
        builder = self.witnesses.builder
        stub, events = found
        name = test_name(e.id, self.names)
        case_id = f"gen:{self.model.name}:{e.id}"
        sk = builder.build(name, case_id, [], {}, events)
        problem = builder.check_test(sk, ReferenceAdapter(self.fsm))
        if problem is not None:
            result.missing.append(missing(e, "replay", f"the test fails on the reference machine: {problem} "
                                                       "(an mbt bug, please report it)"))
            return
        self.stubs.append({"id": case_id, **stub_notes(e), **stub})
        doc = [f"Covers {e.id} ({e.criterion}, {e.severity.value}): a run of `{self.fsm.name}` "
               "that triggers the invariant, checked at every step.", "", e.label,
               f"Model: {e.location.file}:{e.location.line}",
               f"Source: {e.span.describe()} ({e.status.value})" if e.span is not None
               else f"Source: none cited ({e.status.value})",
               "Run: " + " -> ".join(call_text(ev, a) for ev, a in events)]
        self.tests.append({"name": name, "doc": "\n".join(doc), "calls": fsm_calls(sk)})
        result.tests.append(GeneratedTest(name=name, case_id=case_id, elements=[e.id], steps=len(events),
                                          events=[call_text(ev, a) for ev, a in events]))

    def files(self, mode: str) -> list[OutputFile]:
        # The tests drive the invariants' FSM: its adapter runs them.
        return model_files(self.model, self.out, mode, self.tests, self.stubs, adapter=self.fsm)


def stub_notes(e: Element) -> dict[str, Any]:
    """What a stub says about the element it was made for (kept as extra fields by the golden loader)."""
    out: dict[str, Any] = {"severity": e.severity.value, "element": e.id}
    if e.span is not None:
        out["source"] = {"cites": e.span.describe(), "status": e.status.value}
    return out


def decision_doc(e: Element, exercised_by: list[str], call: DriverCall) -> str:
    lines = [f"Covers {e.id} ({e.criterion}, {e.severity.value}).", "", e.label,
             f"Model: {e.location.file}:{e.location.line}",
             f"Source: {e.span.describe()} ({e.status.value})" if e.span is not None
             else f"Source: none cited ({e.status.value})"]
    if exercised_by:
        lines.append("Reached, but not checked, by goldens: " + ", ".join(exercised_by))
    expected = dict(call["kwargs"])
    lines.append(f"Expects: {'an error (the hit policy fails)' if expected.get('error') else expected.get('expect')!r}")
    return "\n".join(lines)


def model_files(model: ModelBase, out: str, mode: str, tests: list[GeneratedFunction],
                stubs: list[dict[str, Any]], adapter: ModelBase | None = None) -> list[OutputFile]:
    """A model's two files: golden-case stubs (JSONL) and the pytest module (whose tests run on `adapter`'s model,
    by default the model itself)."""
    name = file_stem(model.name)
    tests_dir = Path(out) / "tests"
    runs_on = adapter or model
    model_file = os.path.relpath(os.path.abspath(runs_on.file), os.path.abspath(tests_dir)).replace(os.sep, "/")
    what = {"gaps": "the coverage gaps", "kill": "the surviving mutants"}.get(
        mode, f"a full {mode.removeprefix('suite-')} suite")
    module_doc = (f"Tests generated by mbt for {what} of {model.kind} model `{model.name}` ({model.file}).\n\n"
                  "Each test drives the system under test through an adapter (see conftest.py and mbt_support.py) "
                  "and checks\nthe model's outcome. Run them with MBT_ADAPTER=package.module:factory for your "
                  "system,\nor MBT_ADAPTER=reference to run them on mbt's reference evaluator for the model.")
    pytest_text = render_pytest(tests, runs_on.name, model_file, module_doc)
    suffix = mode.replace("-", "_")
    return [
        OutputFile(f"goldens/{name}.{mode}.jsonl", render_jsonl(stubs),
                   f"golden-case stubs for {what} of model {model.name}"),
        OutputFile(f"tests/test_{name}_{suffix}.py", pytest_text, f"pytest tests for {what} of model {model.name}"),
    ]


def missing(e: Element, reason: str, message: str) -> MissingWitness:
    return MissingWitness(element=e.id, criterion=e.criterion, reason=reason, message=message, location=str(e.location))


def file_stem(name: str) -> str:
    """A model name as a file name part (model names are identifiers; anything else is replaced)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "model"


def call_text(event: str, args: dict[str, Any]) -> str:
    return f"{event}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


def test_doc(sk: Skeleton, suite: tuple[str, int, int] | None) -> str:
    """The test's docstring: what it covers, where the model says so, the source span's quote, the run."""
    lines = []
    if suite is None:
        e = sk.element
        lines.append(f"Covers {e.id} ({e.criterion}, {e.severity.value}).")
        lines.append("")
        lines.append(e.label)
        lines.append(f"Model: {e.location.file}:{e.location.line}")
        lines.append(f"Source: {e.span.describe()} ({e.status.value})" if e.span is not None
                     else f"Source: none cited ({e.status.value})")
        if sk.exercised_by:
            lines.append("Reached, but not checked, by goldens: " + ", ".join(sk.exercised_by))
        forbidden = [s.forbid for s in sk.steps if s.forbid is not None]
        if forbidden:
            lines.append(f"Asserts the forbidden behaviour does not happen: {forbidden[0].description}")
    else:
        criterion, n, total = suite
        lines.append(f"Run {n} of {total} of the {criterion} suite: covers {len(sk.elements)} "
                     f"{criterion}{'s' if len(sk.elements) != 1 else ''} for the first time.")
        lines.append("")
        for e in sk.elements:
            cite = f' -- {e.span.describe()}' if e.span is not None else ""
            lines.append(f"{e.id}{cite}")
    start = f"from {sk.precondition!r}: " if sk.precondition else ""
    lines.append("Run: " + start + " -> ".join(call_text(s.event, s.args) for s in sk.steps))
    return "\n".join(lines)
