"""The facade: load -> check -> enumerate -> replay goldens -> measure -> gate. The CLI calls only these functions."""

from __future__ import annotations

import datetime as dt
import functools
import gc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mbt.cache import Loaded, load_compiled
from mbt.elements.base import ElementsReport, ModelElements
from mbt.errors import MbtError
from mbt.goldens.cases import GoldenSet
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

# Annotations only: each loads when a command uses it (start-up time), the LLM judge's module when such a judge is made.
if TYPE_CHECKING:
    from mbt.analysis.findings import CheckReport
    from mbt.answers.results import EvalReport
    from mbt.goldens.loader import GoldenStream
    from mbt.judges.llm import LLMSettings


def __getattr__(name: str) -> Any:
    """The goldens reader's names, part of the facade as ever, imported on first use (start-up time)."""
    if name in ("GoldenStream", "load_goldens"):
        from mbt.goldens import loader

        return getattr(loader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    from mbt.analysis.findings import CheckReport

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
             covering_cap: int | None = None, engine: str = "local", scheduler: str | None = None,
             answer_paths: list[str] | None = None) -> CoverageReport:
    """Coverage of the models by the goldens, gated; `jobs` worker processes for a large golden set (default: the
    machine's cores); the compiled models from the cache (mbt/cache.py) unless `use_cache` is False; at most
    `covering_cap` golden ids kept per element (the rest counted; None: all). `engine` "dask": the goldens replayed
    on a Dask cluster (`scheduler` its address; None: a local one of `jobs` workers). `answer_paths`: `mbt eval
    --model` reports, whose judged answers verify elements beside the goldens (mbt.answers.coverage)."""
    from mbt.goldens.loader import GoldenStream  # on use: start-up time

    gate = load_gate(gate_path) if gate_path else DEFAULT_GATE
    evals = _eval_reports(answer_paths)
    loaded = load_compiled(model_paths, use_cache)
    invalid_cap = None if covering_cap is None else INVALID_CAP  # capped ids: a capped list of invalid cases too
    goldens = GoldenStream(golden_paths, invalid_cap)  # replayed as read: the cases are never all in memory at once
    report = _measure(loaded.models, goldens, jobs, model_paths, use_cache, engine, scheduler, covering_cap,
                      invalid_cap=invalid_cap)
    report.notes += _cache_notes(loaded)
    _add_answers(report, loaded.models, evals, covering_cap)
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


def _eval_reports(answer_paths: list[str] | None) -> list[tuple[str, EvalReport]]:
    """The eval reports of `--answers`, read (and validated) before any work."""
    if not answer_paths:
        return []
    from mbt.answers.coverage import read_eval_reports  # on use: start-up time

    return read_eval_reports(answer_paths)


def _add_answers(report: CoverageReport, models: list[ModelBase], evals: list[tuple[str, EvalReport]],
                 cap: int | None) -> None:
    """The elements the eval reports' judged answers verify, before the gate (its `.answer_verified` rules)."""
    if evals:
        from mbt.answers.coverage import answer_coverage

        report.answers = answer_coverage(report, models, evals, cap)


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
                 sorted_folders: list[str] | None = None, levels: LevelOptions | None = None,
                 answer_paths: list[str] | None = None) -> CoverageRun:
    """`coverage` with the gate's ratchet (`baseline_path`), source coverage and the traceability matrix
    (`review`), diagrams for the HTML report (`diagrams`), the per-case results (`cases`) and the mutation run
    (`mutants`, before the gate: `<kind>.mutation` and `duplicates` rules read it). `sorted_folders`: golden folders
    given as positional paths, whose files that are not golden cases are left out (mbt.paths.left_out). `levels`:
    what seed 004's opt-in levels read (LevelOptions); every run reports all five levels (mbt.measure.levels).
    `answer_paths`: `mbt eval --model` reports, whose judged answers verify elements beside the goldens."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.goldens.loader import GoldenStream, load_goldens
    from mbt.measure.baseline import load_baseline

    gate = load_gate(gate_path) if gate_path else DEFAULT_GATE
    if fail_under is not None:
        gate = with_fail_under(gate, fail_under)
    baseline = load_baseline(baseline_path) if baseline_path else None
    evals = _eval_reports(answer_paths)
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
    _add_answers(report, models, evals, covering_cap)
    if use_gate:
        report.gate = evaluate_gate(gate, report, today, baseline, baseline_path)
    run = CoverageRun(report, models=models, provenance=provenance(command))
    if baseline is not None:
        run.comparison = compare_with_baseline(baseline, report, waived_elements(report))
    if entries is not None:
        run.cases = case_results(report, entries)
    levels = levels or LevelOptions()
    if review or diagrams or levels.reads_documents:
        from mbt.measure.sources import measure_sources
        from mbt.measure.trace import trace_rows

        waived = waived_elements(report)
        report.sources, resolved = measure_sources(models, report.models, gate.exclusions, levels.sources)
        report.traceability = trace_rows(models, report.models, resolved, waived)
    report.levels = _levels(report, levels, model_paths, golden_paths, not_goldens)
    if progress is not None:
        progress.close()
    if diagrams:
        add_diagrams(run, progress)
    return run


@dataclass
class LevelOptions:
    """What seed 004's opt-in levels read (docs/levels.md): `asked`, the levels among 0, 1, 2 to measure; `sources`,
    documents no model declares whose units count too; `judge`, the LLM judge (`openai:MODEL`) asked where the
    embedded rules are not sure (None: the embedded ones alone); `propositions`, the reviewable propositions file read
    in preference to the splitting rules; `runs`, observed runs for level 4; `probes`, a probe file for level 1."""

    asked: tuple[int, ...] = ()
    sources: list[str] = field(default_factory=list)
    judge: str | None = None
    propositions: str | None = None
    runs: list[str] = field(default_factory=list)
    probes: str | None = None

    @property
    def reads_documents(self) -> bool:
        return bool(set(self.asked) & {0, 1, 2}) or bool(self.sources)


def _levels(report: CoverageReport, options: LevelOptions, model_paths: list[str], golden_paths: list[str],
            not_goldens):
    """Seed 004's five levels for the report: the opt-in ones measured when asked for (mbt.measure.levels)."""
    from pathlib import Path

    from mbt.measure.levels import LEVEL_UNIT_KINDS, summarise

    for path in options.sources:
        if not Path(path).is_file():
            raise MbtError(f"--source {path}: no such file")
    if options.asked and "-" in golden_paths:
        raise MbtError("--levels reads the goldens a second time: give them as files, not - (standard input)")
    units = [(u.id, d.path, u.line_start, u.text) for d in (report.sources.documents if report.sources else [])
             for u in d.units if u.status != "excluded" and u.kind in LEVEL_UNIT_KINDS]
    embedding = direct = propositions = None
    if units and options.asked:
        from mbt.goldens.loader import GoldenStream
        from mbt.measure.alignment import align_units, golden_text

        cases = list(GoldenStream(golden_paths, None, not_goldens).all_cases()) if golden_paths else []
        texts = _unique_ids([golden_text(c) for c in cases])
        llm = None
        if options.judge not in (None, "embedded"):
            from mbt.judges import make_judge

            llm = make_judge(options.judge)
        if 0 in options.asked:
            from mbt.measure.embedding import embedding_coverage

            embedding = embedding_coverage(units, texts)
        if 1 in options.asked:
            direct = align_units(units, texts, llm)
        if 2 in options.asked:
            from mbt.measure.propositions import proposition_coverage, read_file

            reviewed = read_file(options.propositions) if options.propositions else None
            propositions = proposition_coverage(units, texts, reviewed, llm)
    runs_report = runs(model_paths, options.runs, golden_paths or None, use_gate=False, jobs=1) \
        if options.runs else None
    probe_report = probes(options.probes) if options.probes else None
    return summarise(report, options.asked, runs_report, probe_report, embedding=embedding, units=direct,
                     propositions=propositions)


@dataclass
class PropositionsFile:
    """What `mbt propositions` writes: the reviewable file's text and what happened on the way."""

    text: str
    units: int
    propositions: int
    kept: int  # entries of the previous file kept (their unit's text unchanged): the cache, edits included
    failures: list[str]  # units the extractor failed on, split by the rules instead


def propositions(model_paths: list[str], sources: list[str], output: str | None, extractor: str = "rules",
                 refresh: bool = False) -> PropositionsFile:
    """The reviewable propositions file (mbt.measure.propositions) for the units of the models' source documents and
    `sources`: an existing `output` is read first and its entries for unchanged units kept (`refresh`: none)."""
    from pathlib import Path

    from mbt.measure.levels import LEVEL_UNIT_KINDS
    from mbt.measure.propositions import extract_file, file_text, read_file
    from mbt.measure.sources import measure_sources

    for path in sources:
        if not Path(path).is_file():
            raise MbtError(f"--source {path}: no such file")
    models = load_models(model_paths)[1] if model_paths else []
    documents, _ = measure_sources(models, [], None, sources)
    units = [(u.id, u.text) for d in documents.documents for u in d.units if u.kind in LEVEL_UNIT_KINDS]
    if not units:
        raise MbtError("no source unit to split: give --model (its declared sources) or --source DOC")
    previous = read_file(output) if output not in (None, "-") and Path(output).is_file() else None
    entries, failures = extract_file(units, extractor, previous, refresh)
    kept = sum(previous is not None and e is previous.entries.get(e.unit) for e in entries)
    return PropositionsFile(file_text(entries), len(entries), sum(len(e.propositions) for e in entries), kept,
                            failures)


def _unique_ids(texts):
    """Goldens named by id, or by id and place where an id repeats (ids are local to a file: seed 001's sheets)."""
    from collections import Counter
    from dataclasses import replace

    counts = Counter(t.id for t in texts)
    return [t if counts[t.id] == 1 else replace(t, id=f"{t.id} ({t.where})") for t in texts]


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
    from mbt.goldens.loader import load_goldens
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
    from mbt.goldens.loader import load_goldens
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
         scheduler: str | None = None, jobs: int | None = None, use_cache: bool = True, group_by: str | None = None,
         judge: Any = None, llm: LLMSettings | None = None):
    """Observed runs judged on the models (mbt.runs): verdicts, first deviations, run metrics, usage-weighted
    coverage beside the goldens' coverage, the gate, and regression goldens written under `regressions`. The runs'
    files are judged in parts at once: by `jobs` processes (default: the machine's cores) when they are large, or with
    `engine` "dask" on a Dask cluster (`scheduler`, or a local one of `jobs` workers); the report is the same. The
    compiled models come from the cache (mbt/cache.py) unless `use_cache` is False. `group_by` (a key of
    mbt.runs.steps.GROUP_KEYS) adds every run metric and the first-deviation distribution per value. `judge`: the
    answer judge deciding what assistant texts say where a `say` forbid's phrases do not (mbt.judges.sayings) — a
    name (`embedded`, the default; `rules`: the phrases alone; `openai:MODEL`) or a judge object; an LLM judge judges
    in this process (it works concurrently itself), and not with `engine` "dask". `llm`: an LLM judge's settings
    (mbt.judges.llm.llm_settings: its server, key and prices); what it cost is the report's `judge_usage`."""
    answers = _answer_judge(judge, llm)
    try:
        return _judged_runs(model_paths, run_paths, golden_paths, gate_path, use_gate, regressions, redact, redact_mode,
                            engine, scheduler, jobs, use_cache, group_by, answers)
    finally:
        if answers is not judge and hasattr(answers, "close"):  # made here from a name: its client and cache
            answers.close()


def _judged_runs(model_paths: list[str], run_paths: list[str], golden_paths: list[str] | None, gate_path: str | None,
                 use_gate: bool, regressions: str | None, redact: list[str] | None, redact_mode: str, engine: str,
                 scheduler: str | None, jobs: int | None, use_cache: bool, group_by: str | None, answers: Any):
    """`runs` with its answer judge made (`answers`: a judge object, or None for each kind's default)."""
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
    if answers is not None and answers.name not in ("embedded", "rules"):
        if engine == "dask":
            raise MbtError(f"--judge {answers.name} judges in this process: it cannot be used with --engine dask")
        jobs = 1  # the LLM judge asks concurrently itself; its client and cache stay in this process
    goldens: GoldenSet | GoldenStream = GoldenSet()
    if golden_paths:
        from mbt.goldens.loader import GoldenStream  # on use: start-up time (runs without goldens read none)

        goldens = GoldenStream(golden_paths)
    kinds = tuple(DEFAULT_KINDS if redact is None else [k for k in redact if k != "none"])
    # The tally takes each model's elements as the coverage report lists them (elements_of: the same list, in the
    # same order), so the report is measured while the workers judge (`meanwhile`): its time is not added to theirs.
    tally = RunTally(models, None, loop=loop, redaction=Redaction(kinds, redact_mode), answers=answers)
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
    report.judge_usage, report.budget = _judge_usage([answers] if answers is not None else [])
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
    from mbt.goldens.loader import load_goldens
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
    from mbt.goldens.loader import load_goldens
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


def _answer_judge(judge: Any, llm: LLMSettings | None = None):
    """A judge object from a judge's name (mbt.judges.make_judge; `llm`: an LLM judge's settings); None stays None
    (each kind's default)."""
    if judge is None or not isinstance(judge, str):
        return judge
    from mbt.judges import make_judge

    if judge in ("embedded", "rules") or llm is None:
        return make_judge(judge)
    return make_judge(judge, settings=llm, budget=llm.budget())  # the run's budget (`llm: max_cost`, --max-cost)


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
         llm: LLMSettings | None = None, gate_path: str | None = None, only=None, merge=None,
         checkpoint=None, jobs: int | None = None):
    """`mbt eval`: the goldens' expected answers against the agent's actual answers from recorded runs, judged per
    criterion (`criteria`: `accuracy=2,safety=1`; `threshold`: the overall threshold; `rubrics`: the texts of custom
    criteria) by `judge` (`embedded`, `rules`, `openai:MODEL`), or by the judge `judges` names for a criterion; no
    behaviour model is needed. `llm`: the LLM judge's settings (mbt.judges.llm.llm_settings). `retry_errors`: the LLM
    judge re-asks only the verdicts its cache holds as errors. `model_paths`: the same runs also judged on these
    behaviour models as `runs` judges them, each case showing its run's verdict there; a contract among them (seed
    000's YAML) judges the last answer of every case naming it on its must_have / must_not items and soft rubric
    (docs/contracts.md). `gate_path`: a gate file whose answer rules replace the default gate (mbt.answers.gate).
    `only` and `merge`: the cases judged, and how they join a stored set's others (eval_retry; evaluate's own).
    `checkpoint` (mbt.answers.evaluate.Checkpoint): where cases are kept as they are judged (eval_stored).
    `jobs`: processes judging at once (the embedded and rule judges' batches, and the runs on the models, in parts:
    mbt.answers.jobs); the report is the same. Returns mbt.answers.results.EvalReport (its `gate` says whether it
    passed)."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.answers.evaluate import evaluate
    from mbt.answers.jobs import cpu_bound, forked
    from mbt.answers.sayings import saying_report
    from mbt.judges.choice import JudgeChoice, make_judges
    from mbt.model.contract import ContractModel

    config = _criteria_setup(criteria, threshold, rubrics)
    gate = load_gate(gate_path) if gate_path else None
    chosen = make_judges(JudgeChoice(judge, dict(judges or {})), config, llm, retry_errors)
    on_model, elements = None, None
    contracts: list[ContractModel] = []
    try:
        if model_paths:
            _, models = load_models(model_paths)
            contracts = [m for m in models if isinstance(m, ContractModel)]  # the cases naming one are judged on it
            if any(support(m.kind).run_judge is not None for m in models):  # a model that judges runs
                judged = runs(model_paths, run_paths, use_gate=False, jobs=jobs or 1, judge=chosen.default)
                on_model = {r.where: (r.verdict, _run_reason(r)) for r in judged.runs}

            def elements(cases):  # the models' say and claim elements, verified by the cases' judged answers
                return saying_report(cases, models, chosen.default)
        # Judges that need only the CPU: whole cases in parts; else each CPU-bound judge's batches (mbt.answers.jobs).
        whole_cases = cpu_bound(chosen.made)
        split = {id(j): j if whole_cases else forked(j, jobs) for j in chosen.made}  # criteria sharing a judge share it
        if checkpoint is not None:  # each part the store keeps carries what the LLM judges cost until then
            checkpoint.usage = lambda: _judge_usage(chosen.made)
        report = evaluate(golden_paths, run_paths, config, split[id(chosen.default)],
                          {key: split[id(j)] for key, j in chosen.per_criterion.items()},
                          model_verdicts=on_model, models=model_paths or [], gate=gate, sayings=elements,
                          contracts=contracts, only=only, merge=merge, checkpoint=checkpoint,
                          jobs=jobs if whole_cases else None)
        report.judge_usage, report.budget = _judge_usage(chosen.made)
        return report
    finally:
        chosen.close()


def _judge_usage(judges: list):
    """What each LLM judge of a run cost, and the run's budget (mbt.judges.usage)."""
    from mbt.judges.usage import judge_usage

    return judge_usage(judges)


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


def contract_evaluator(contract_paths: list[str], judge: str = "embedded"):
    """Seed 000's `contract_evaluator`: the contracts found in `contract_paths` (files or folders; other models there
    are left aside) and a judge (`embedded`, `rules` or `openai:MODEL`) as a mbt.judges.contract.ContractEvaluator,
    whose `evaluate(contract_id=..., response=..., evidence=...)` gives `hard_gate_passed` and `failures`."""
    from mbt.judges import make_judge
    from mbt.judges.contract import ContractEvaluator
    from mbt.model.contract import ContractModel

    _, models = load_models(contract_paths)
    contracts = [m for m in models if isinstance(m, ContractModel)]
    if not contracts:
        raise MbtError(f"no contract in {', '.join(contract_paths)} (a contract is seed 000's YAML: `id`, "
                       "`must_have`, `must_not`, ...)")
    return ContractEvaluator(contracts, make_judge(judge))


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


@dataclass
class ProbeGeneration:
    """What `mbt generate --probes` makes: the probe file's text, what generating found (mbt.generate.probes.ProbeSet:
    units given fewer probes, LLM failures, probes kept from the file, probes that are a golden's question) and the
    report of the probes (a mbt.measure.probes.ProbeReport, as `mbt probes FILE` gives it)."""

    text: str
    probes: Any
    report: Any


def generate_probes(model_paths: list[str], golden_paths: list[str], output: str | None,
                    generators: list[str] | None = None, per_unit: int | None = None, sources: list[str] | None = None,
                    judge: str | None = None, refresh: bool = False, confidence: float = 0.95,
                    resamples: int | None = None, seed: int = 0) -> ProbeGeneration:
    """Held-out probes per source unit of the models' documents (and `sources`) from each generator (default the rule
    generators `unit-text`, `model-words`; `openai:MODEL` an LLM), at most `per_unit` each, judged covered or not by
    the goldens (level 1's alignment; `judge` `openai:MODEL` decides what the embedded rule leaves), with the report
    of the probe file (mbt.generate.probes; docs/levels.md, "Generating the probes"). An existing `output` is read
    first: an LLM's probes of an unchanged unit are kept from it (`refresh`: none)."""
    from pathlib import Path

    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.generate import probes as generation
    from mbt.goldens.loader import GoldenStream
    from mbt.measure.alignment import golden_text
    from mbt.measure.levels import LEVEL_UNIT_KINDS
    from mbt.measure.probes import DEFAULT_RESAMPLES, estimate, read_probes
    from mbt.measure.sources import measure_sources
    from mbt.reader import shown_path

    chosen = list(dict.fromkeys(generators or generation.RULE_GENERATORS))
    for name in chosen:
        if name not in generation.RULE_GENERATORS and not name.startswith("openai:"):
            raise MbtError(f"--generator {name}: a generator is {', '.join(generation.RULE_GENERATORS)} or "
                           "openai:MODEL")
    per_unit = generation.DEFAULT_PER_UNIT if per_unit is None else per_unit
    if per_unit < 1:
        raise MbtError(f"--per-unit {per_unit}: at least 1 probe per unit")
    for path in sources or []:
        if not Path(path).is_file():
            raise MbtError(f"--source {path}: no such file")
    if "-" in golden_paths:
        raise MbtError("--probes reads the goldens to judge the probes: give them as files, not - (standard input)")
    models = load_models(model_paths)[1] if model_paths else []
    documents, _ = measure_sources(models, [], None, list(sources or []))
    units = [generation.Unit(u.id, d.path, u.line_start, u.text, tuple(u.cited_by_parts))
             for d in documents.documents for u in d.units if u.kind in LEVEL_UNIT_KINDS]
    if not units:
        raise MbtError("no source unit to draw probes from: the models declare no source document (give --source DOC)")
    cases = list(GoldenStream(golden_paths).all_cases()) if golden_paths else []
    goldens = _unique_ids([golden_text(c) for c in cases])
    previous = read_probes(output) if output not in (None, "-") and Path(output).is_file() else []
    drawn = generation.draw(units, models, chosen, per_unit, previous, refresh)
    if not drawn.probes:
        raise MbtError(f"no probe drawn from {len(units)} unit(s) by {', '.join(chosen)}"
                       + (f" ({'; '.join(drawn.failures)})" if drawn.failures else ""))
    llm = None
    if judge not in (None, "embedded"):
        from mbt.judges import make_judge

        llm = make_judge(judge)
    generation.judge(drawn, units, goldens, llm)
    shown = shown_path(output) if output not in (None, "-") else "<stdout>"
    report = estimate(drawn.as_read(), shown, confidence, DEFAULT_RESAMPLES if resamples is None else resamples, seed)
    return ProbeGeneration(drawn.text(), drawn, report)


# ---- The result store (issue 35, docs/results.md): result sets kept, listed, shown, exported, compared ----------


@dataclass
class Stored:
    """An `mbt eval` or `mbt runs` report with what the store made of it: the set saved (None: not asked), and the
    cases that passed in the baseline set and do not now (`--baseline-set`, already added to the report's gate);
    for a resumed set, the cases it kept and those judged now."""

    report: object
    saved: object | None = None  # mbt.store.model.SetInfo
    regressions: list = field(default_factory=list)  # mbt.store.model.Regression
    rerun: list[str] | None = None  # --retry-errors NAME: the keys of the errored cases run again
    resumed: tuple[int, int] | None = None  # (cases kept, cases judged) of a resumed set


def _store(store: str | None, store_config: str | None, create: bool = False):
    """The store opened (and migrated): `store` is --store, `store_config` the configuration file's `store`;
    MBT_STORE_URL comes between them, the default `.mbt/results.db` after (mbt.store.url). Only a command that saves
    (`create`) makes a SQLite file that is not there."""
    from mbt.store.db import Store
    from mbt.store.url import resolve

    return Store(resolve(store, store_config), create=create)


def _stored_run(run_type: str, suite_paths: list[str], save: str | None, store: str | None,
                store_config: str | None, baseline_set: str | None, judge: dict, meta: dict, produce,
                resume: str | None = None, inputs: tuple[str, ...] = ("goldens", "runs", "models")) -> Stored:
    """Run `produce(writer)` -> (report, its cases as records), with the set `running` in the store meanwhile when
    `save` is given (the empty string: the default name) or `resume` names an interrupted set to take over;
    `produce` writes the cases into `writer` (None: nothing is saved) as it goes. Then the set is marked `done`
    (only if it holds every case); with `baseline_set`, the cases that passed there and do not now fail the
    report's gate. `inputs`: the meta's keys a resumed set must have been started with as this run gives them."""
    from mbt.store.compare import baseline, regressions
    from mbt.store.query import set_info, set_row
    from mbt.store.records import NewSet, default_name, executor, now, report_summary, report_usage, suite_name
    from mbt.store.write import SetWriter

    with _store(store, store_config, create=save is not None) as opened:
        if baseline_set is not None:
            baseline(opened, baseline_set, run_type)
        if save is None and resume is None:
            report, cases = produce(None)
            found = regressions(opened, baseline_set, cases) if baseline_set is not None else []
            _gate_regressions(report, found, baseline_set)
            return Stored(report, None, found)
        if resume is not None:
            writer = SetWriter.resume(opened, resume, run_type, _effective_judge(judge),
                                      {k: meta[k] for k in inputs}, normalise=_effective_judge)
        else:
            suite = suite_name(suite_paths)
            started = now()
            new = NewSet(name=save or default_name(suite, started), suite=suite, run_type=run_type,
                         executor=executor(), judge=judge, meta=meta, started_at=started)
            # An eval set is resumable: its writer keeps a heartbeat (a runs process forks its workers: no thread).
            writer = SetWriter(opened, new, name_given=bool(save), heartbeat=run_type == "eval")
        with writer:
            kept = writer.kept
            report, cases = produce(writer)
            found = regressions(opened, baseline_set, cases) if baseline_set is not None else []
            _gate_regressions(report, found, baseline_set)
            writer.finish(report_summary(report), judge=_judge_of(report, judge), expected=len(cases),
                          usage=report_usage(report))
        with opened.read() as conn:
            saved = set_info(set_row(conn, writer.name, opened))
        return Stored(report, saved, found, resumed=(kept, len(cases) - kept) if resume is not None else None)


def _effective_judge(given: Mapping) -> dict:
    """A judge configuration as the command line gives it (`criteria` a text, `threshold` a text or absent) or as a
    finished set keeps it (`criteria` weights by key), in one form: the judge, each enabled criterion's weight, the
    threshold, exact decimals written alike (so `accuracy=1` and the default compare equal)."""
    from decimal import Decimal

    criteria, threshold = given.get("criteria"), given.get("threshold")
    if isinstance(criteria, Mapping):
        weights = {str(k): Decimal(str(v)) for k, v in criteria.items()}
        cut = Decimal(str(threshold if threshold is not None else 0))
    else:
        config = _criteria_setup(criteria, threshold)
        weights, cut = {c.key: c.exact_weight for c in config.enabled}, config.threshold
    return {"judge": str(given.get("judge") or "embedded"),
            "criteria": {k: str(w.normalize()) for k, w in weights.items() if w != 0},
            "threshold": str(cut.normalize())}


def _judge_of(report, given: dict) -> dict:
    from mbt.answers.results import EvalReport
    from mbt.store.records import eval_judge

    return {**given, **eval_judge(report)} if isinstance(report, EvalReport) else given


def _gate_regressions(report, found: list, baseline_set: str | None) -> None:
    """The baseline's regressions as gate failures of the report (eval: its gate's lines; runs: gate failures)."""
    if baseline_set is None or not found:
        return
    from mbt.answers.results import EvalReport
    from mbt.measure.coverage import GateFailure

    lines = [f"{r.where}: case `{r.key}` passed in the baseline set `{baseline_set}` and is {r.after} now"
             for r in found]
    if isinstance(report, EvalReport):
        report.gate.failures.extend(lines)
        report.gate.passed = False
    elif report.gate is not None:
        report.gate.failures.append(GateFailure(
            rule="baseline-set", expected=f"no case that passed in `{baseline_set}` fails", actual=len(found),
            message=f"{len(found)} case(s) passed in the baseline set `{baseline_set}` and do not now",
            elements=lines))
        report.gate.passed = False


def eval_stored(golden_paths: list[str], run_paths: list[str], save: str | None = None, store: str | None = None,
                store_config: str | None = None, baseline_set: str | None = None, resume: str | None = None,
                **options) -> Stored:
    """`mbt eval` (the same `options`) with the result store: `save` keeps the result set (None: not kept; the
    empty string: named `<suite>_TestResult_<timestamp>`), `baseline_set` fails the gate on every case that passed
    in that set and does not now. The set is `running` while the cases are judged, each part of them written as it
    is judged, and `done` once all are. `resume` (instead of `save`) takes over the interrupted set of that name,
    started with these same inputs and judge options: the cases it holds are kept, the rest judged and added."""
    from mbt.store.checkpoint import StoreCheckpoint
    from mbt.store.records import eval_outcomes

    if save is not None and resume is not None:
        raise MbtError("--save starts a new result set and --resume continues one: give one of them")

    def produce(writer):
        checkpoint = StoreCheckpoint(writer) if writer is not None else None
        report = eval(golden_paths, run_paths, checkpoint=checkpoint, **options)
        return report, eval_outcomes(report)  # every case (the checkpoint wrote them), for the baseline and the count

    # What the command line gave; the report's own configuration replaces it once the cases are judged.
    judge = {k: v for k, v in (("judge", options.get("judge", "embedded")), ("criteria", options.get("criteria")),
                               ("threshold", options.get("threshold"))) if v is not None}
    meta = {"goldens": list(golden_paths), "runs": list(run_paths), "models": list(options.get("model_paths") or [])}
    return _stored_run("eval", golden_paths, save, store, store_config, baseline_set, judge, meta, produce, resume)


def runs_stored(model_paths: list[str], run_paths: list[str], golden_paths: list[str] | None = None,
                save: str | None = None, store: str | None = None, store_config: str | None = None,
                baseline_set: str | None = None, **options) -> Stored:
    """`mbt runs` (the same `options`) with the result store, as eval_stored: each run is a case of the set, its
    verdict on the model its overall verdict (a deviation fails, an invalid run is an error). A runs set is written
    once its runs are judged (they are judged in parts by forked workers)."""
    from mbt.runs.reader import read_runs
    from mbt.store.records import runs_records

    if baseline_set is not None and not options.get("use_gate", True):
        raise MbtError("--baseline-set is a gate rule; it cannot be used with --no-gate")
    gate_path = options.get("gate_path")
    handoff = frozenset(load_gate(gate_path).handoff_suites) if gate_path else frozenset()

    def produce(writer):
        report = runs(model_paths, run_paths, golden_paths, **options)
        cases = runs_records(report, read_runs(run_paths).runs, handoff)  # the runs declare the cases' keys
        if writer is not None:
            writer.add(cases)
        return report, cases

    judge = {"models": list(model_paths), "gate": gate_path}
    meta = {"models": list(model_paths), "runs": list(run_paths), "goldens": list(golden_paths or [])}
    return _stored_run("runs", run_paths, save, store, store_config, baseline_set, judge, meta, produce)


def results_list(store: str | None = None, store_config: str | None = None, search: str | None = None,
                 statuses: tuple[str, ...] = (), run_types: tuple[str, ...] = (), executor: str | None = None,
                 since: str | None = None, until: str | None = None, limit: int | None = None):
    """`mbt results list`: the result sets, newest first, through seed 001's search and filters
    (mbt.store.model.SetList)."""
    from mbt.store.query import SetFilters, list_sets

    with _store(store, store_config) as opened:
        return list_sets(opened, SetFilters(search, statuses, run_types, executor, since, until, limit))


def results_show(name: str, store: str | None = None, store_config: str | None = None, turns: str | None = None,
                 results: tuple[str, ...] = (), search: str | None = None, limit: int | None = 100, offset: int = 0):
    """`mbt results show NAME`: the set's overview and its cases through the filters (mbt.store.model.SetView)."""
    from mbt.store.query import CaseFilters, show

    with _store(store, store_config) as opened:
        return show(opened, name, CaseFilters(turns, results, search, limit, offset))


def results_case(name: str, key: str, store: str | None = None, store_config: str | None = None):
    """`mbt results show NAME --case KEY`: one case in detail (mbt.store.model.CaseDetail)."""
    from mbt.store.query import case_detail

    with _store(store, store_config) as opened:
        return case_detail(opened, name, key)


def results_export(name: str, store: str | None = None, store_config: str | None = None, turns: str | None = None,
                   results: tuple[str, ...] = (), search: str | None = None):
    """`mbt results export NAME`: the set with its cases streamed page by page (mbt.store.query.Export); close it
    (`with`) once written: it holds the store open."""
    from mbt.store.query import CaseFilters, export

    opened = _store(store, store_config)
    try:
        return export(opened, name, CaseFilters(turns, results, search))
    except BaseException:
        opened.close()
        raise


def results_site(store: str | None = None, store_config: str | None = None, names: tuple[str, ...] = (),
                 search: str | None = None, statuses: tuple[str, ...] = (), run_types: tuple[str, ...] = (),
                 executor: str | None = None, since: str | None = None, until: str | None = None,
                 limit: int | None = None):
    """`mbt results site DIR`: the sets named (`names`), else those the list's filters let through, for the viewer
    (mbt.store.pages.ViewerSets; mbt.report.site writes it). Close it (`with`) once written: it holds the store
    open."""
    from mbt.store.pages import ViewerSets, viewer_sets
    from mbt.store.query import SetFilters

    opened = _store(store, store_config)
    try:
        return ViewerSets(opened, viewer_sets(opened, names, SetFilters(search, statuses, run_types, executor, since,
                                                                        until, limit)))
    except BaseException:
        opened.close()
        raise


def results_rename(old: str, new: str, store: str | None = None, store_config: str | None = None):
    from mbt.store.query import rename

    with _store(store, store_config) as opened:
        return rename(opened, old, new)


def results_delete(names: list[str], store: str | None = None, store_config: str | None = None) -> list[str]:
    from mbt.store.query import delete

    with _store(store, store_config) as opened:
        return delete(opened, names)


def results_compare(first: str, second: str, store: str | None = None, store_config: str | None = None,
                    cases: tuple[str, ...] = (), flipped_sessions: bool = False):
    """`mbt results compare A B` (mbt.store.compare; mbt.store.model.Comparison)."""
    from mbt.store.compare import compare

    with _store(store, store_config) as opened:
        return compare(opened, first, second, cases, flipped_sessions)


# ---- The live agent (issue 35, docs/agents.md): `mbt eval --agent`, `--retry-errors NAME`, `mbt serve` ---------------


def _cases_to_drive(golden_paths: list[str], model_paths: list[str] | None, only=None):
    """The golden cases `mbt eval` would judge, as the driver sends them, and a note for each it cannot send
    (mbt.agents.record.cases_to_drive); the contracts `model_paths` gives count as checks, as they do for eval."""
    from mbt.agents.record import cases_to_drive
    from mbt.answers.evaluate import load_answer_goldens
    from mbt.model.contract import ContractModel

    names: list[str] = []
    if model_paths:
        _, models = load_models(model_paths)
        names = [m.name for m in models if isinstance(m, ContractModel)]
    return cases_to_drive(load_answer_goldens(golden_paths, names).cases, only)


def _agent_setup(agent: str, timeout: float | None, concurrency: int | None, agent_config: Mapping | None):
    from mbt.agents.adapters import open_agent
    from mbt.agents.spec import Secrets, parse_spec, settings_from

    spec = parse_spec(agent, settings_from(dict(agent_config or {}), timeout, concurrency))
    secrets = Secrets()
    return spec, secrets, open_agent(spec, secrets)


def eval_agent(golden_paths: list[str], agent: str, record: str | None = None, timeout: float | None = None,
               concurrency: int | None = None, agent_config: Mapping | None = None, save: str | None = None,
               store: str | None = None, store_config: str | None = None, baseline_set: str | None = None,
               resume: str | None = None, **options) -> Stored:
    """`mbt eval --agent SPEC`: each golden case sent to the live agent in a session of its own (mbt.agents: the
    adapter SPEC names, `timeout` seconds per turn, at most `concurrency` cases in flight; `agent_config`: the
    configuration file's `agent:`), what came back recorded as transcripts (into `record`, a folder, when given) and
    then judged exactly as `eval` judges recorded runs (the same `options`). A case the agent did not answer is
    `error` with its agent error, counted apart from judge errors. `save` / `baseline_set` / `resume` as for
    eval_stored; a resumed set's cases are neither sent to the agent again nor judged again."""
    from mbt.agents.drive import drive
    from mbt.agents.record import RecordFolder
    from mbt.store.checkpoint import StoreCheckpoint
    from mbt.store.records import eval_outcomes

    if save is not None and resume is not None:
        raise MbtError("--save starts a new result set and --resume continues one: give one of them")
    spec, secrets, adapter = _agent_setup(agent, timeout, concurrency, agent_config)
    with RecordFolder(record) as folder:
        def produce(writer):
            kept = writer.stored_keys() if writer is not None and writer.kept else set()
            cases, notes = _cases_to_drive(golden_paths, options.get("model_paths"))
            if kept:  # a resumed set: only the cases it lacks go to the agent
                cases = [c for c in cases if c.key not in kept]
            drive(adapter, cases, folder.path, spec.settings.timeout, spec.settings.concurrency, secrets)
            checkpoint = StoreCheckpoint(writer, folder.relabel) if writer is not None else None
            report = eval(golden_paths, [str(folder.path)], checkpoint=checkpoint, **options)
            report.agent = spec.shown
            report.notes[:0] = notes
            folder.relabel(report)
            return report, eval_outcomes(report)

        if save is None and baseline_set is None and resume is None:
            return Stored(produce(None)[0])

        judge = {k: v for k, v in (("judge", options.get("judge", "embedded")), ("criteria", options.get("criteria")),
                                   ("threshold", options.get("threshold"))) if v is not None}
        meta = {"goldens": list(golden_paths), "agent": spec.shown, "record": record,
                "models": list(options.get("model_paths") or [])}
        return _stored_run("eval", golden_paths, save, store, store_config, baseline_set, judge, meta, produce,
                           resume, inputs=("goldens", "agent", "models"))


def eval_retry(name: str, golden_paths: list[str], run_paths: list[str] | None = None, agent: str | None = None,
               record: str | None = None, timeout: float | None = None, concurrency: int | None = None,
               agent_config: Mapping | None = None, store: str | None = None, store_config: str | None = None,
               baseline_set: str | None = None, **options) -> Stored:
    """`mbt eval --retry-errors NAME`: the errored cases of the stored eval set NAME (the agent did not answer, or a
    judge failed) run again — sent to the agent again with `agent`, else judged again from `run_paths` — and put in
    place of the old ones; the set's totals and gate counted again over all its cases (mbt.store.update: one
    transaction). The criteria must be the ones the set was judged with. The LLM judge re-asks the verdicts its cache
    holds as errors."""
    from mbt.agents.drive import drive
    from mbt.agents.record import RecordFolder
    from mbt.answers.results import CaseResult
    from mbt.store.compare import baseline, regressions
    from mbt.store.records import case_scope, eval_records, report_summary, report_usage
    from mbt.store.update import replace_cases, stored_set

    if (agent is None) == (run_paths is None):
        raise MbtError("--retry-errors NAME runs the errored cases again: give --agent SPEC (drive them again) or "
                       "--runs PATH (judge them again), one of the two")
    options["retry_errors"] = True
    with _store(store, store_config) as opened:
        kept = stored_set(opened, name)
        _same_criteria(name, kept.judge, options)
        if baseline_set is not None:
            baseline(opened, baseline_set, "eval")
        errored = kept.errored
        before = [(c.key, CaseResult.model_validate(c.doc)) for c in kept.cases]
        rerun: dict[str, CaseResult] = {}

        def merge(judged: list[CaseResult]) -> list[CaseResult]:
            found = {}
            for case in judged:
                for key in (f"{case_scope(case.file)}/{case.id}", f"{case.file}/{case.id}"):
                    found[key] = case
            rerun.update({key: found[key] for key, _ in before if key in found})
            return [found.get(key, old) for key, old in before]

        with RecordFolder(record) as folder:
            if agent is not None:
                spec, secrets, adapter = _agent_setup(agent, timeout, concurrency, agent_config)
                cases, notes = _cases_to_drive(golden_paths, options.get("model_paths"), set(errored))
                drive(adapter, cases, folder.path, spec.settings.timeout, spec.settings.concurrency, secrets)
                report = eval(golden_paths, [str(folder.path)], only=set(errored), merge=merge, **options)
                report.agent = spec.shown
                report.notes[:0] = notes
                folder.relabel(report)
                runs = folder.runs()
            else:
                from mbt.runs.reader import read_runs

                report = eval(golden_paths, list(run_paths or []), only=set(errored), merge=merge, **options)
                runs = read_runs(list(run_paths or [])).runs
            made = eval_records(report, runs)
            found = regressions(opened, baseline_set, made) if baseline_set is not None else []
            _gate_regressions(report, found, baseline_set)
            changed = [r for r in made if r.case_key in rerun]
            saved = None
            if changed:
                judge = {k: v for k, v in kept.judge.items()}
                saved = replace_cases(opened, name, changed, report_summary(report), _judge_of(report, judge),
                                      report_usage(report))
            else:
                from mbt.store.query import set_info, set_row

                with opened.read() as conn:
                    saved = set_info(set_row(conn, name, opened))
        return Stored(report, saved, found, rerun=list(rerun))


def _same_criteria(name: str, judged_with: Mapping, options: Mapping) -> None:
    """A retry judges with the set's criteria and threshold: another configuration would mix two kinds of verdict."""
    from decimal import Decimal, InvalidOperation

    config = _criteria_setup(options.get("criteria"), options.get("threshold"), options.get("rubrics"))
    found = judged_with.get("criteria")
    stored: Mapping = found if isinstance(found, Mapping) else {}

    def number(text) -> Decimal | None:
        try:
            return Decimal(str(text))
        except (InvalidOperation, ValueError):
            return None

    given = {c.key: c.exact_weight for c in config.enabled}
    differs = [key for key, weight in given.items() if number(stored.get(key)) != weight]
    if differs or number(judged_with.get("threshold")) != config.threshold:
        shown = ",".join(f"{k}={v}" for k, v in stored.items())
        raise MbtError(f"result set `{name}` was judged with --criteria {shown or '?'} --threshold "
                       f"{judged_with.get('threshold', '?')}: give the same to retry its errored cases")


def serve(model_paths: list[str], host: str = "127.0.0.1", port: int = 0, fault: str | None = None,
          api_key_env: str | None = None, log=None, precondition: Mapping | None = None):
    """`mbt serve`: the state machine models of `model_paths` as reference agents behind an OpenAI-compatible
    chat-completions endpoint (mbt.agents.serve.AgentServer, not yet started), `fault` injected into each, every
    conversation starting where `precondition` says (a golden's precondition: `state`, variables)."""
    import os

    from mbt.agents.reference import ReferenceAgent
    from mbt.agents.serve import AgentServer
    from mbt.model.fsm import FsmModel

    _, models = load_models(model_paths)
    machines = [m for m in models if isinstance(m, FsmModel)]
    if not machines:
        raise MbtError(f"no state machine (`fsm`) model in {', '.join(model_paths)}: mbt serve answers with a state "
                       "machine's reference machine")
    names = [m.name for m in machines]
    if len(set(names)) != len(names):
        raise MbtError("two served models share a name; serve one file, or models with names of their own")
    key = None
    if api_key_env is not None:
        key = os.environ.get(api_key_env)
        if not key:
            raise MbtError(f"--api-key-env {api_key_env}: the environment variable is not set")
    try:
        agents = [ReferenceAgent(m, fault, dict(precondition or {})) for m in machines]
    except ValueError as err:
        raise MbtError(f"--precondition: {err}") from None
    try:
        return AgentServer(agents, host=host, port=port, api_key=key, log=log)
    except OSError as err:
        raise MbtError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
