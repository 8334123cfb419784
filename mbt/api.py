"""The facade: load -> check -> enumerate -> replay goldens -> measure -> gate. The CLI calls only these functions."""

from __future__ import annotations

import datetime as dt
import functools
import gc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mbt.analysis.findings import CheckReport
from mbt.cache import Loaded, load_compiled
from mbt.elements.base import ElementsReport, ModelElements
from mbt.errors import MbtError
from mbt.goldens.loader import GoldenSet, GoldenStream, load_goldens
from mbt.goldens.results import Note
from mbt.goldens.routing import applies  # noqa: F401 - part of the facade
from mbt.kind import support
from mbt.measure.baseline import compare as compare_with_baseline
from mbt.measure.cases import case_results
from mbt.measure.coverage import CoverageReport
from mbt.measure.coverage_run import CoverageRun
from mbt.measure.distributed import DaskEngine  # imports dask only when a run starts it
from mbt.measure.gate import DEFAULT_GATE, evaluate_gate, load_gate, with_fail_under
from mbt.measure.run import INVALID_CAP, CaseEntry, measure
from mbt.model.common import ModelBase
from mbt.parsing.loader import ModelFile, load_paths
from mbt.paths import left_out
from mbt.progress import Progress
from mbt.provenance import provenance

if TYPE_CHECKING:  # annotations only: the LLM judge's module loads when such a judge is made
    from mbt.judges.llm import LLMSettings


def collector_paused(func):
    """Run `func` with Python's cyclic garbage collector paused.

    A run builds millions of small acyclic objects (parse nodes, elements, golden cases); reference counting frees
    them, but the cyclic collector re-scans the survivors again and again, which made a 100,000-golden run three
    times slower (tests/bench). Afterwards what was built is frozen (left out of later scans) and collection resumes.
    """

    @functools.wraps(func)
    def paused(*args, **kwargs):
        if not gc.isenabled():
            return func(*args, **kwargs)
        gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            gc.freeze()
            gc.enable()

    return paused


def load_models(paths: list[str]) -> tuple[list[ModelFile], list[ModelBase]]:
    files = load_paths(paths)
    return files, [m for f in files for m in f.models]


@collector_paused
def check(paths: list[str], depth: int | None = None) -> CheckReport:
    """`depth`: how many steps the invariant checks explore (default: mbt.analysis.invariant_checks.DEFAULT_DEPTH)."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.analysis.check import CheckOptions, run_checks

    files, models = load_models(paths)
    options = CheckOptions() if depth is None else CheckOptions(depth=depth)
    return CheckReport(files=[f.path for f in files], models=[m.name for m in models],
                       findings=run_checks(files, options))


@collector_paused
def elements(paths: list[str], criteria: list[str] | None = None) -> ElementsReport:
    _, models = load_models(paths)
    out = []
    for m in models:
        kind = support(m.kind)
        found = [e for e in kind.elements(m) if not criteria or e.criterion in criteria]
        out.append(ModelElements(model=m.name, kind=m.kind, file=m.file, criteria=[c.name for c in kind.criteria], elements=found))
    return ElementsReport(models=out)


@collector_paused
def coverage(model_paths: list[str], golden_paths: list[str], gate_path: str | None = None,
             use_gate: bool = True, jobs: int | None = None, use_cache: bool = True,
             covering_cap: int | None = None, engine: str = "local", scheduler: str | None = None) -> CoverageReport:
    """Coverage of the models by the goldens, gated; `jobs` worker processes for a large golden set (default: the
    machine's cores); the compiled models from the cache (mbt/cache.py) unless `use_cache` is False; at most
    `covering_cap` golden ids kept per element (the rest counted; None: all). `engine` "dask": the goldens replayed
    on a Dask cluster (`scheduler` its address; None: a local one of `jobs` workers)."""
    gate = load_gate(gate_path) if gate_path else DEFAULT_GATE
    loaded = load_compiled(model_paths, use_cache)
    invalid_cap = None if covering_cap is None else INVALID_CAP  # capped ids: a capped list of invalid cases too
    goldens = GoldenStream(golden_paths, invalid_cap)  # replayed as read: the cases are never all in memory at once
    report = _measure(loaded.models, goldens, jobs, model_paths, use_cache, engine, scheduler, covering_cap,
                      invalid_cap=invalid_cap)
    report.notes += _cache_notes(loaded)
    if use_gate:
        report.gate = evaluate_gate(gate, report)
    return report


def _measure(models: list[ModelBase], goldens: GoldenSet | GoldenStream, jobs: int | None, model_paths: list[str],
             use_cache: bool, engine: str, scheduler: str | None, covering_cap: int | None = None,
             cases: list[CaseEntry] | None = None, invalid_cap: int | None = None) -> CoverageReport:
    if engine == "dask":
        with DaskEngine(model_paths, scheduler, jobs, use_cache) as cluster:
            return measure(models, goldens, jobs, covering_cap, cases, cluster, invalid_cap)
    if engine != "local":
        raise MbtError(f"unknown engine `{engine}` (local, dask)")
    if scheduler is not None:
        raise MbtError("--scheduler is an address for --engine dask; add --engine dask")
    return measure(models, goldens, jobs, covering_cap, cases, invalid_cap=invalid_cap)


def _cache_notes(loaded: Loaded) -> list[Note]:
    return [Note(case="", where="", model="", turn=None, message=message) for message in loaded.notes]


@collector_paused
def coverage_run(model_paths: list[str], golden_paths: list[str], gate_path: str | None = None,
                 use_gate: bool = True, baseline_path: str | None = None, review: bool = False,
                 diagrams: bool = False, today: dt.date | None = None, cases: bool = False,
                 fail_under: float | None = None, command: list[str] | None = None,
                 progress: Progress | None = None, jobs: int | None = None, use_cache: bool = True,
                 covering_cap: int | None = None, mutants: bool = False, sample: int | None = None,
                 seed: int = 0, engine: str = "local", scheduler: str | None = None,
                 sorted_folders: list[str] | None = None) -> CoverageRun:
    """`coverage` with the gate's ratchet (`baseline_path`), source coverage and the traceability matrix
    (`review`), diagrams for the HTML report (`diagrams`), the per-case results (`cases`) and the mutation run
    (`mutants`, before the gate: `<kind>.mutation` and `duplicates` rules read it). `sorted_folders`: golden folders
    given as positional paths, whose files that are not golden cases are left out (mbt.paths.left_out)."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.measure.baseline import load_baseline

    gate = load_gate(gate_path) if gate_path else DEFAULT_GATE
    if fail_under is not None:
        gate = with_fail_under(gate, fail_under)
    baseline = load_baseline(baseline_path) if baseline_path else None
    loaded = load_compiled(model_paths, use_cache)
    models = loaded.models
    # Replayed as read, the cases never all in memory at once; the mutation run needs them all (and standard input
    # can be read only once), so with `mutants` they are loaded first and both runs use them.
    not_goldens = left_out(sorted_folders or [], models)
    held = load_goldens(golden_paths, not_goldens) if mutants else None
    # Capped ids (the CLI's default), and no per-case view listing every case: a capped list of invalid cases too.
    invalid_cap = None if covering_cap is None or cases or held is not None else INVALID_CAP
    goldens: GoldenSet | GoldenStream = held if held is not None else GoldenStream(golden_paths, invalid_cap,
                                                                                   not_goldens)
    if progress is not None and isinstance(goldens, GoldenStream):
        goldens.on_read = progress.stage("goldens", goldens.size, "B", scale=True)
    entries: list[CaseEntry] | None = [] if cases else None
    report = _measure(models, goldens, jobs, model_paths, use_cache, engine, scheduler, covering_cap, entries,
                      invalid_cap)
    report.notes += _cache_notes(loaded)
    if held is not None:
        from mbt.mutate.engine import mutation_run
        from mbt.mutate.redundancy import redundancy

        mutation = mutation_run(models, held, sample=sample, seed=seed)
        mutation.report.redundancy = redundancy(list(mutation.profiles.values()))
        report.mutation = mutation.report
    if use_gate:
        report.gate = evaluate_gate(gate, report, today, baseline, baseline_path)
    run = CoverageRun(report, models=models, provenance=provenance(command))
    if baseline is not None:
        run.comparison = compare_with_baseline(baseline, report, waived_elements(report))
    if entries is not None:
        run.cases = case_results(report, entries)
    if review or diagrams:
        from mbt.measure.sources import measure_sources
        from mbt.measure.trace import trace_rows

        waived = waived_elements(report)
        report.sources, resolved = measure_sources(models, report.models, gate.exclusions)
        report.traceability = trace_rows(models, report.models, resolved, waived)
    if progress is not None:
        progress.close()
    if diagrams:
        add_diagrams(run, progress)
    return run


def waived_elements(report: CoverageReport) -> dict[str, set[str]]:
    """Model -> element ids under a waiver in force (empty without a gate)."""
    models = {m for m, _ in report.waived()}
    return {m: report.waived_in(m) for m in models}


def add_diagrams(run: CoverageRun, progress: Progress | None = None) -> None:
    """Each model's view for the HTML report: a diagram (a large one in its bounded form, a layout that runs too
    long stopped with a note) or a table. Separate from coverage_run, so the other reports need not wait for it."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.render import views
    from mbt.render.graph import Graph, RenderOptions
    from mbt.render.table import TableView

    waived = waived_elements(run.report)
    by_name = {m.model: m for m in run.report.models}
    advance = progress.stage("diagrams", len(run.models), "model") if progress is not None else None
    for model in run.models:
        if advance is not None:
            advance(1)
        try:
            view = views.view_for(model)
        except MbtError as err:
            run.diagram_errors[model.name] = err.message
            continue
        # Short edge labels (event and guard): the actions are in each transition's tooltip.
        options = RenderOptions(waived=frozenset(waived.get(model.name, set())), short_labels=True)
        built = view.build(model, by_name.get(model.name), options)
        if view.shape == "table":
            assert isinstance(built, TableView)  # what a table-shaped view builds
            run.tables[model.name] = built
            continue
        from mbt.render.dot import layout_for, svg_text, to_dot

        assert isinstance(built, Graph)  # what a graph-shaped view builds
        layout = layout_for(built)
        try:
            run.diagrams[model.name] = svg_text(to_dot(built, links=True, layout=layout), layout.engine)
        except MbtError as err:  # no `dot`, a failed layout, or one stopped at the time limit: the report says so
            run.diagram_errors[model.name] = err.message
            continue
        if layout.note:
            run.diagram_notes[model.name] = layout.note
    if progress is not None:
        progress.close()


def baseline_text(report: CoverageReport) -> str:
    """The baseline file content for `--save-baseline` (waived forbidden elements are not recorded as gaps)."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.measure.baseline import baseline_text as text

    return text(report, waived_elements(report))


@dataclass
class Rendered:
    model: str
    data: bytes
    note: str | None = None  # a large graph drawn in its bounded form: why (mbt.render.dot.layout_for)


@collector_paused
def render(model_paths: list[str], output: str, golden_paths: list[str] | None = None, name: str | None = None,
           focus: str | None = None, depth: int = 1, path: str | None = None, clusters: str = "auto",
           gate_path: str | None = None) -> Rendered:
    """One model drawn (FSM: DOT/SVG/PNG) or tabulated (tables, policies), coverage painted when goldens are given."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.render import views
    from mbt.render.graph import RenderOptions
    from mbt.render.paths import read_path

    _, models = load_models(model_paths)
    if name is not None:
        chosen = [m for m in models if m.name == name]
        if not chosen:
            raise MbtError(f"--name {name}: no such model (loaded: {', '.join(m.name for m in models)})")
    else:
        chosen = models
    if len(chosen) != 1:
        raise MbtError(f"{len(chosen)} models loaded ({', '.join(m.name for m in chosen)}); "
                       "pick one with --name")
    model = chosen[0]
    suffix = views.check_suffix(model, output)
    keys = read_path(path, model) if path else None
    gate = load_gate(gate_path) if gate_path else DEFAULT_GATE
    model_cov, waived = None, set()
    if golden_paths:
        # Measured on every loaded model, as mbt coverage measures: a case invalid on another of them counts nowhere.
        report = measure(models, load_goldens(golden_paths))
        report.gate = evaluate_gate(gate, report)
        model_cov = next(m for m in report.models if m.model == model.name)
        waived = waived_elements(report).get(model.name, set())
    options = RenderOptions(focus=focus, depth=depth, path=keys, clusters=clusters, waived=frozenset(waived))
    data, note = views.render_bytes(model, model_cov, options, suffix)
    return Rendered(model.name, data, note)


def import_dmn(path: str):
    """A DMN file's decision tables as DSL text (mbt.importers.dmn.DmnImport); the text is read back before it is
    returned, so what `mbt import dmn` writes is a valid model."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.importers.dmn import import_dmn as convert

    return convert(path)


@collector_paused
def generate(model_paths: list[str], golden_paths: list[str], out: str, criteria: list[str] | None = None,
             suite: str | None = None, max_depth: int | None = None, preconditions: list[dict] | None = None,
             force: bool = False, max_paths: int | None = None, kill: bool = False, progress: Progress | None = None):
    """Test skeletons for the coverage gaps (or, with `suite`, a full suite; with `kill`, the tests that kill the
    surviving mutants, mbt.generate.kill) written under `out`
    (mbt.generate.generation); returns the GenerateReport."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.generate.generation import GenerateOptions
    from mbt.generate.generation import generate as run
    from mbt.generate.witnesses import DEFAULT_MAX_DEPTH, DEFAULT_MAX_PATHS
    from mbt.report.generate_text import generate_text  # the summary file's text: generation formats nothing itself

    _, models = load_models(model_paths)
    goldens = load_goldens(golden_paths) if golden_paths else GoldenSet()
    options = GenerateOptions(criteria=criteria, suite=suite, max_depth=max_depth or DEFAULT_MAX_DEPTH,
                              max_paths=max_paths or DEFAULT_MAX_PATHS, preconditions=list(preconditions or []),
                              force=force, summary=lambda report: generate_text(report, with_files=False))
    if progress is not None:
        options.advance = progress.stage("models", len(models), "model")
    if kill:
        from mbt.generate.kill import generate_kill

        return generate_kill(models, goldens, out, options)
    try:
        return run(models, goldens, out, options)
    finally:
        if progress is not None:
            progress.close()


def import_graphwalker(paths: str | list[str], output: str | None = None):
    """GraphWalker JSON or GraphML files' models as one DSL text (mbt.importers.graphwalker.GraphWalkerImport):
    files given together that share states become one linked fsm; `source` paths relative to where `output`
    goes; the text is read back before it is returned, so it is a valid model."""
    from pathlib import Path

    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.importers.graphwalker import import_graphwalker_files

    folder = Path(output).resolve().parent if output not in (None, "-") else Path.cwd()
    return import_graphwalker_files([paths] if isinstance(paths, str) else list(paths), folder)


@collector_paused
def runs(model_paths: list[str], run_paths: list[str], golden_paths: list[str] | None = None,
         gate_path: str | None = None, use_gate: bool = True, regressions: str | None = None,
         redact: list[str] | None = None, redact_mode: str = "hash", engine: str = "local",
         scheduler: str | None = None, jobs: int | None = None, use_cache: bool = True, group_by: str | None = None):
    """Observed runs judged on the models (mbt.runs): verdicts, first deviations, run metrics, usage-weighted
    coverage beside the goldens' coverage, the gate, and regression goldens written under `regressions`. The runs'
    files are judged in parts at once: by `jobs` processes (default: the machine's cores) when they are large, or with
    `engine` "dask" on a Dask cluster (`scheduler`, or a local one of `jobs` workers); the report is the same. The
    compiled models come from the cache (mbt/cache.py) unless `use_cache` is False. `group_by` (a key of
    mbt.runs.steps.GROUP_KEYS) adds every run metric and the first-deviation distribution per value."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.measure.coverage import GateFailure, GateResult
    from mbt.runs.gate import evaluate_runs
    from mbt.runs.loop import LoopRules
    from mbt.runs.measure import RunTally
    from mbt.runs.parts import judge_in_parts, prepare
    from mbt.runs.redact import DEFAULT_KINDS, Redaction
    from mbt.runs.regression import write_regressions
    from mbt.runs.steps import GROUP_KEYS

    gate = load_gate(gate_path) if gate_path else None
    loaded = load_compiled(model_paths, use_cache)
    models = loaded.models
    if engine not in ("local", "dask"):
        raise MbtError(f"unknown engine `{engine}` (local, dask)")
    if scheduler is not None and engine != "dask":
        raise MbtError("--scheduler is an address for --engine dask; add --engine dask")
    if group_by is not None and group_by not in GROUP_KEYS:
        raise MbtError(f"unknown --group-by `{group_by}` ({', '.join(GROUP_KEYS)})")
    separately, required = (gate.report_separately, gate.required_suites) if gate else ([], [])
    loop = LoopRules(**gate.turn_loop) if gate else LoopRules()
    handoff = frozenset(gate.handoff_suites) if gate else frozenset()
    goldens = GoldenStream(golden_paths) if golden_paths else GoldenSet()
    kinds = tuple(DEFAULT_KINDS if redact is None else [k for k in redact if k != "none"])
    # The tally takes each model's elements as the coverage report lists them (elements_of: the same list, in the
    # same order), so the report is measured while the workers judge (`meanwhile`): its time is not added to theirs.
    tally = RunTally(models, None, loop=loop, redaction=Redaction(kinds, redact_mode))
    measured: list[CoverageReport] = []

    def coverage() -> None:
        measured.append(measure(models, goldens))
        measured[0].notes += _cache_notes(loaded)
        tally.measured(measured[0])

    if engine == "dask":
        prepare(tally, model_paths, use_cache)  # before the local cluster forks its workers: they inherit it
        with DaskEngine(model_paths, scheduler, jobs, use_cache) as cluster:
            runset, tally = judge_in_parts(cluster, models, model_paths, run_paths, None, tally=tally,
                                           meanwhile=coverage)
    else:
        runset, tally = judge_in_parts(None, models, model_paths, run_paths, None, jobs, tally=tally,
                                       meanwhile=coverage)
    coverage_report = measured[0]
    report = tally.report(runset, coverage_report if golden_paths else None, separately, required, handoff, group_by)
    if use_gate:
        failures = evaluate_runs(gate, report.metrics, report.suites, len(runset.invalid) + sum(
            r.verdict == "invalid" for r in report.runs))
        coverage_gate = None
        if golden_paths:  # the goldens' coverage is gated as `mbt coverage` gates it
            from mbt.measure.gate import Gate

            rules = gate.coverage_rules() if gate else DEFAULT_GATE.rules
            coverage_gate = evaluate_gate(Gate(rules, gate.source if gate else None, gate.waivers if gate else [],
                                               gate.exclusions if gate else [],
                                               gate.implicit if gate else DEFAULT_GATE.implicit), coverage_report)
            failures.extend(coverage_gate.failures)
        elif gate is not None:  # a written coverage rule cannot be met without goldens
            failures.extend(GateFailure(rule=r.key, expected=r.describe(), actual=None,
                                        message=f"gate rule `{r.key}` is measured on goldens: add --goldens")
                            for r in gate.coverage_rules() if r.line > 0)
        report.gate = GateResult(enabled=True, passed=not failures, source=gate.source if gate else None,
                                 failures=failures, waivers=coverage_gate.waivers if coverage_gate else [])
    goldens_out, skipped = tally.regressions.goldens()
    report.regression_goldens = sum(len(v) for v in goldens_out.values())
    report.regressions_skipped = skipped
    if regressions is not None:
        report.regressions = write_regressions(regressions, goldens_out)
    return report


@collector_paused
def mutate(model_paths: list[str], golden_paths: list[str], sample: int | None = None, seed: int = 0,
           time_limit: float | None = None, progress: Progress | None = None,
           sorted_folders: list[str] | None = None):
    """Mutation adequacy of the goldens on the models, with their redundancy and the smallest equivalent set
    (mbt.mutate); returns the mbt.mutate.engine.MutationRun. `sorted_folders`: as for coverage_run."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.mutate.engine import mutation_run
    from mbt.mutate.redundancy import DEFAULT_TIME_LIMIT, redundancy

    _, models = load_models(model_paths)
    advance = progress.stage("models", len(models), "model") if progress is not None else None
    goldens = load_goldens(golden_paths, left_out(sorted_folders or [], models))
    run = mutation_run(models, goldens, sample=sample, seed=seed, advance=advance)
    if progress is not None:
        progress.close()
    limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    run.report.redundancy = redundancy(list(run.profiles.values()), limit)
    return run


@collector_paused
def compare(model_paths: list[str], baseline_paths: list[str], golden_paths: list[str], sample: int | None = None,
            seed: int = 0, sorted_folders: list[str] | None = None):
    """The marginal value of each golden of `golden_paths` over the baseline goldens (mbt.mutate.compare).
    `sorted_folders`: candidate folders given as positional paths, as for coverage_run."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.mutate.compare import compare as judge
    from mbt.mutate.engine import mutation_run

    _, models = load_models(model_paths)
    old, new = load_goldens(baseline_paths), load_goldens(golden_paths, left_out(sorted_folders or [], models))
    both = GoldenSet(cases=old.cases + new.cases, invalid=old.invalid + new.invalid, files=old.files + new.files,
                     left_out=new.left_out)
    clash = {c.id for c in old.cases} & {c.id for c in new.cases}
    if clash:
        raise MbtError(f"{len(clash)} candidate golden id(s) are baseline ids too ({', '.join(sorted(clash)[:5])}"
                       "): give the new goldens their own ids")
    run = mutation_run(models, both, sample=sample, seed=seed)
    report = judge([run.profiles[c.id] for c in _first_ids(old.cases)], [run.profiles[c.id] for c in _first_ids(new.cases)])
    report.mutation = run.report
    return report


def _first_ids(cases):
    seen: set[str] = set()
    out = []
    for c in cases:
        if c.id not in seen:
            seen.add(c.id)
            out.append(c)
    return out


def _criteria_setup(criteria: str | None, threshold: str | None, rubrics: Mapping[str, str] | None = None):
    """The criteria configuration of `mbt eval` (seed 001's default: accuracy alone, threshold 0), each criterion with
    its rubric from `rubrics` (the configuration file's custom criteria; a rubric for a built-in criterion replaces
    its definition)."""
    from dataclasses import replace

    from mbt.judges import criteria_config, default_config, parse_weights

    listed = default_config().criteria if criteria is None else parse_weights(criteria)
    given = [replace(c, rubric=rubrics[c.key]) if rubrics and c.key in rubrics else c for c in listed]
    if criteria is None and threshold is None and not rubrics:
        return default_config()
    return criteria_config(given, threshold if threshold is not None else 0)


def eval(golden_paths: list[str], run_paths: list[str], judge: str = "embedded", criteria: str | None = None,
         threshold: str | None = None, retry_errors: bool = False, model_paths: list[str] | None = None,
         judges: Mapping[str, str] | None = None, rubrics: Mapping[str, str] | None = None,
         llm: LLMSettings | None = None, gate_path: str | None = None, jobs: int | None = None):
    """`mbt eval`: the goldens' expected answers against the agent's actual answers from recorded runs, judged per
    criterion (`criteria`: `accuracy=2,safety=1`; `threshold`: the overall threshold; `rubrics`: the texts of custom
    criteria) by `judge` (`embedded`, `rules`, `openai:MODEL`), or by the judge `judges` names for a criterion; no
    behaviour model is needed. `llm`: the LLM judge's settings (mbt.judges.llm.llm_settings). `retry_errors`: the LLM
    judge re-asks only the verdicts its cache holds as errors. `model_paths`: the same runs also judged on these
    behaviour models as `runs` judges them, each case showing its run's verdict there. `gate_path`: a gate file whose
    answer rules replace the default gate (mbt.answers.gate). Returns mbt.answers.results.EvalReport (its `gate` says
    whether it passed). `jobs`: processes judging at once (the embedded and rule judges' batches, and the runs on the
    models, in parts: mbt.answers.jobs); the report is the same."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.answers.evaluate import evaluate
    from mbt.answers.jobs import forked
    from mbt.judges.choice import JudgeChoice, make_judges

    config = _criteria_setup(criteria, threshold, rubrics)
    gate = load_gate(gate_path) if gate_path else None
    on_model = None
    if model_paths:
        judged = runs(model_paths, run_paths, use_gate=False, jobs=jobs or 1)
        on_model = {r.where: (r.verdict, _run_reason(r)) for r in judged.runs}
    chosen = make_judges(JudgeChoice(judge, dict(judges or {})), config, llm, retry_errors)
    try:
        split = {id(j): forked(j, jobs) for j in chosen.made}  # one wrapper per judge: criteria sharing one share it
        report = evaluate(golden_paths, run_paths, config, split[id(chosen.default)],
                          {key: split[id(j)] for key, j in chosen.per_criterion.items()},
                          model_verdicts=on_model, models=model_paths or [], gate=gate)
        report.judge_usage, report.budget = _judge_usage(chosen.made)
        return report
    finally:
        chosen.close()


def _judge_usage(judges: list):
    """What each LLM judge of an eval cost, and the run's budget (mbt.judges.llm: Usage, Budget)."""
    from mbt.answers.results import EvalBudget, JudgeUsage

    out, budget = [], None
    for judge in judges:
        usage = getattr(judge, "usage", None)
        if usage is None:  # the embedded and rule judges cost nothing
            continue
        price = judge.price
        note = (f"at ${price.input_per_mtok:g} / ${price.output_per_mtok:g} per million input / output tokens "
                "(the configuration file's price)" if price is not None
                else f"not measured: no price for `{judge.model}` (llm: prices: in the configuration file)")
        out.append(JudgeUsage(judge=judge.name, asked=usage.asked, requests=usage.requests, retries=usage.retries,
                              cache_hits=usage.cache_hits, cache_hit_rate=usage.cache_hit_rate,
                              prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                              replies_without_usage=usage.replies_without_usage, cost=judge.cost, cost_note=note,
                              not_asked=usage.over_budget))
        if judge.budget is not None:
            b = judge.budget
            budget = EvalBudget(max_cost=b.max_cost, max_requests=b.max_requests, requests=b.requests,
                                reached=b.refusal() if any(u.not_asked for u in out) else None)
    return out, budget


def judge_calibrate(labels_path: str, judge: str = "embedded", judges: Mapping[str, str] | None = None,
                    rubrics: Mapping[str, str] | None = None, llm: LLMSettings | None = None):
    """`mbt judge calibrate`: the judge of each labelled answer's criterion (`judge`, or the one `judges` names for
    it; `recorded`: the verdicts the file records) against the human labels of the JSON Lines file at
    `labels_path`: agreement, Cohen's kappa, the confusion table and the decided share per criterion. Returns
    mbt.answers.selftest.CalibrationReport; a bad line is a located error (file:line:1)."""
    from mbt.answers.selftest import calibration_report
    from mbt.judges.choice import JudgeChoice

    return calibration_report(labels_path, JudgeChoice(judge, dict(judges or {})), rubrics, llm)


def judge_sensitivity(golden_paths: list[str], judge: str = "embedded", judges: Mapping[str, str] | None = None,
                      rubrics: Mapping[str, str] | None = None, llm: LLMSettings | None = None):
    """`mbt judge sensitivity`: the goldens' expected answers mutated into wrong answers (a number changed, a
    negation inserted, a must_not phrase inserted, a step dropped, an instruction to the judge injected), each
    judged by the accuracy judge against the unchanged expected answer: per operator the mutants made, caught,
    missed and undecided, and the controls. Returns mbt.answers.selftest.SensitivityReport."""
    from mbt.answers.selftest import sensitivity_report
    from mbt.judges.choice import JudgeChoice

    return sensitivity_report(golden_paths, JudgeChoice(judge, dict(judges or {})), rubrics, llm)


def _run_reason(run) -> str:
    """Why a run has its verdict on the model: its first deviation, else what was not judged."""
    if run.deviation is not None:
        return f"{run.deviation.type} at {run.deviation.where}: {run.deviation.message}"
    if run.not_judged:
        return "; ".join(run.not_judged)
    return "no deviation from the model" if run.verdict == "pass" else run.verdict


def eval_prompts(golden_paths: list[str], run_paths: list[str], criterion: str, criteria: str | None = None,
                 threshold: str | None = None, rubrics: Mapping[str, str] | None = None) -> list[str]:
    """`mbt eval --show-prompt KEY`: the LLM judge's request for criterion KEY on each judged turn, as text."""
    from mbt.answers.evaluate import judge_inputs, load_answer_goldens, match_runs
    from mbt.judges.prompts import show_prompt
    from mbt.runs.reader import read_runs

    config = _criteria_setup(criteria, threshold, rubrics)
    keys = [c.key for c in config.enabled]
    if criterion not in keys:
        raise MbtError(f"--show-prompt: `{criterion}` is not an enabled criterion ({', '.join(keys)})")
    goldens = load_answer_goldens(golden_paths)
    match_runs(goldens.cases, read_runs(run_paths).runs)
    return [f"## case {item.case_id} ({g.case.where})\n{show_prompt(item)}" for g in goldens.cases
            for item in judge_inputs(g, config) if item.criterion.key == criterion]


def probes(path: str, confidence: float = 0.95, resamples: int | None = None, seed: int = 0,
           candidates_from: str | None = None):
    """Probe coverage conditioned on a generator, from a file of judged held-out probes (mbt.measure.probes; seed
    004): per unit, pooled and stratified, with intervals, and leave-one-generator-out; a ProbeReport."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.measure.probes import DEFAULT_RESAMPLES, probe_coverage

    return probe_coverage(path, confidence=confidence, resamples=DEFAULT_RESAMPLES if resamples is None else resamples,
                          seed=seed, candidates_from=candidates_from)
