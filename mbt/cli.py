"""Command line: translates arguments into one call of mbt.api, formats the result, maps it to an exit code."""

from __future__ import annotations

import sys

try:  # everything but sys inside: a Ctrl-C while any of it loads is caught below
    import errno
    import functools
    import os
    import traceback
    from collections.abc import Callable, Sequence
    from typing import TYPE_CHECKING

    import click

    from mbt import __version__
    from mbt.errors import MbtError
except KeyboardInterrupt:  # Ctrl-C while mbt starts (before main can catch it): one line, exit 130, no stack
    sys.stderr.write("mbt: interrupted\n")
    raise SystemExit(130) from None

# mbt.api and the reporters import the whole pipeline (lark, pydantic models, networkx, z3 ...): they are imported
# when a command runs, so `mbt --help` and `mbt --version` start fast.
if TYPE_CHECKING:  # annotations only (start-up time, as above)
    from mbt.analysis.findings import CheckReport
    from mbt.measure.coverage_run import CoverageRun
    from mbt.report.core import Body
    from mbt.report.formats import Format, Options, Target


def _api():
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt import api

    return api


def emit(body, path: str | None) -> None:
    """Every output of every command goes through the one writer (mbt.report.core): stdout, a file or a folder."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.report.core import write_report

    write_report(body, path)

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
# Golden ids kept per element and list in a coverage report unless `--show-covering all` (the rest are counted):
# memory and report size then grow with the model, not with the number of cases. A couple of dozen examples per
# element are what a reader looks at; on a model of 200,000 elements each further id costs some 30 MB of report
# and of memory.
COVERING_CAP = 25


class Paths(click.Option):
    """A repeatable option that also takes several values after one flag: `--goldens a.jsonl b.jsonl`, which is
    what a shell glob (`--goldens goldens/*.jsonl`) turns into. It takes the words up to the next option; `-` is a
    value (standard input)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("multiple", True)
        kwargs.setdefault("type", click.Path())  # shell completion completes file and folder names
        super().__init__(*args, **kwargs)

    def add_to_parser(self, parser, ctx):
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            option = parser._long_opt.get(name) or parser._short_opt.get(name)  # click has no public hook
            if option is None:
                continue
            take_one = option.process

            def take_all(value, state, take_one=take_one):
                take_one(value, state)
                while state.rargs and (state.rargs[0] == "-" or not state.rargs[0].startswith("-")):
                    take_one(state.rargs.pop(0), state)

            option.process = take_all


def _models_and_goldens(paths, models, goldens,
                        goldens_needed: bool = True) -> tuple[list[str], list[str], list[str]]:
    """Positional paths sorted into models and goldens (mbt.paths), then --model / --goldens, globs expanded; and
    the golden folders given as positional paths (their files are sorted before they are read as goldens).
    Models and goldens from the configuration file count only when no path is given on the command line."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.paths import expand, split_positional

    ctx = click.get_current_context()
    if paths:
        models = () if ctx.get_parameter_source("models") == click.core.ParameterSource.DEFAULT_MAP else models
        if ctx.get_parameter_source("goldens") == click.core.ParameterSource.DEFAULT_MAP:
            goldens = ()

    positional = split_positional(list(paths))
    found_models = positional.models + expand(list(models), "--model")
    found_goldens = positional.goldens + expand(list(goldens), "--goldens")
    if not found_models:
        raise MbtError("no model given: name model files or folders with --model PATH (or as arguments)")
    return found_models, found_goldens, positional.folders

format_option = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                             show_default=True, help="Report format (JSON follows docs/schemas/).")
output_option = click.option("-o", "--output", "output", default=None, type=click.Path(), metavar="FILE",
                             help="Write the report to FILE instead of stdout.")
# `--format NAME[:PATH]`, repeatable: several reports from one run (mbt.report.formats).
formats_option = click.option(
    "--format", "formats", multiple=True, metavar="NAME[:PATH]",
    help="Report format, repeatable, each optionally with its own output path: text (default), json, markdown, "
         "junit, sarif, github, codequality (GitLab); for coverage also html (a folder), trace-md, trace-csv, xlsx and cases-csv "
         "(one row per golden case). "
         "E.g. --format junit:mbt.xml --format sarif:mbt.sarif --format text.")
root_option = click.option(
    "--root", "root", default=None, metavar="DIR", type=click.Path(file_okay=False),
    help="The repository root SARIF paths are relative to  [default: $GITHUB_WORKSPACE, else the working folder].")
multi_output_option = click.option("-o", "--output", "output", default=None, type=click.Path(), metavar="PATH",
                                   help="Output path of the one --format given without a path (html: a folder).")
# The result store (docs/results.md): where result sets are kept, and the options that keep or read them.
store_option = click.option(
    "--store", "store", default=None, metavar="URL",
    help="The result store: a SQLite file or sqlite:///PATH, or postgresql://USER@HOST[:PORT]/DB (its password from "
         "the URL or PGPASSWORD)  [default: $MBT_STORE_URL, else the configuration file's `store`, else "
         ".mbt/results.db].")
save_option = click.option(
    "--save", "save", is_flag=False, flag_value="", default=None, metavar="[NAME]",
    help="Keep this run's results as a result set in the store, named NAME (unique) or, without NAME, "
         "<suite>_TestResult_<timestamp> (mbt results list shows it).")
baseline_set_option = click.option(
    "--baseline-set", "baseline_set", default=None, metavar="NAME",
    help="Fail the gate when a case that passed in the stored result set NAME does not pass now.")


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _store_config() -> str | None:
    """The configuration file's `store` (a path or a URL without a password), or None."""
    config = click.get_current_context().find_root().obj
    return getattr(config, "values", {}).get("store")


def _saved_note(stored) -> None:
    """The result set kept (stderr): its name and how to see it."""
    if stored.saved is not None:
        resumed = (f"resumed: {stored.resumed[0]} case(s) kept, {stored.resumed[1]} judged now; "
                   if getattr(stored, "resumed", None) else "")
        _note(f"mbt: result set `{stored.saved.name}` {resumed}saved ({stored.saved.status}, "
              f"{stored.saved.cases_total} case(s)): mbt results show {shlex_quote(stored.saved.name)}", False)


# Shown at the end of every command's --help (click keeps lines after \b as written).
_EXIT_CODES = """Exit codes:
  0 ok, 1 a gate or check failed, 2 unusable input or option (file:line:col),
  3 an internal error (a bug in mbt), 130 interrupted"""
_ENVIRONMENT = """Environment:
  MBT_CONFIG        the configuration file (else pyproject.toml [tool.mbt] / mbt.yaml, found upwards)
  MBT_DEBUG=1       the traceback of an internal error
  NO_COLOR, FORCE_COLOR, PY_COLORS=0|1   colour (as pytest; --color wins)
  GITHUB_WORKSPACE  SARIF paths are relative to it (else --root, else the working folder)
  MBT_STORE_URL     the result store of --save, --baseline-set and mbt results (docs/results.md)"""


def epilog(*examples: str) -> str:
    """Two or three examples, the exit codes and the environment variables, for a command's --help."""
    return "\b\nExamples:\n" + "\n".join(f"  {e}" for e in examples) + f"\n\n\b\n{_EXIT_CODES}\n\n\b\n{_ENVIRONMENT}"


def verbosity(command):
    """-q / -v on a command: -q keeps the text report to its numbers and the terminal free of notes; -v lists
    everything (for coverage: every uncovered element and the goldens covering each element)."""
    command = click.option("-v", "--verbose", is_flag=True, help="List everything (coverage: every uncovered "
                           "element and which goldens cover each one).")(command)
    return click.option("-q", "--quiet", is_flag=True, help="Only the numbers and errors; no notes on stderr.")(command)


def _check_verbosity(quiet: bool, verbose: bool) -> None:
    if quiet and verbose:
        raise MbtError("-q and -v cannot be used together")


def _note(message: str, quiet: bool) -> None:
    """An informational line on stderr (never on stdout, which carries the report); -q silences it."""
    if not quiet:
        click.echo(message, err=True)


def _progress():
    """A progress bar on stderr, only on a terminal (mbt.progress; imported when a command runs)."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.progress import Progress

    return Progress.for_terminal()


def _write_reports(targets: Sequence[Target], produce: Callable[[Target], Body]) -> None:
    """Produce every report first, then write them (mbt.report.core): a failure leaves no half-written set behind."""
    from mbt.report.core import Output, write_reports  # start-up time: only commands that write reports load them

    write_reports([Output(functools.partial(produce, t), t.path) for t in targets])


# The report the github format's summary annotation points to, when several are written (the most complete first).
FULL_REPORT_ORDER = ("html", "sarif", "json", "text", "markdown", "junit")


def _full_report(targets) -> str | None:
    written = {t.format.name: t.path for t in targets if t.path not in (None, "-")}
    return next((written[name] for name in FULL_REPORT_ORDER if name in written), None)


def _pretty(output: str | None) -> bool:
    """JSON is indented for a person at a terminal and compact in files and pipes (coverage.py does the same)."""
    return output in (None, "-") and sys.stdout.isatty()


def _style(output: str | None):
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.report.style import Style

    color = click.get_current_context().meta.get("mbt.color", "auto")
    return Style.for_stream(sys.stdout, color) if output in (None, "-") else Style(False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mbt")
@click.option("--config", "config_path", default=None, metavar="FILE", envvar="MBT_CONFIG",
              help="Read settings from FILE (pyproject.toml with [tool.mbt], or mbt.yaml) instead of the one found "
                   "from the working folder upwards.")
@click.option("--no-config", is_flag=True, help="Read no configuration file.")
@click.option("--color", type=click.Choice(["auto", "yes", "no"]), default="auto", show_default=True,
              help="Colour in terminal reports (auto: PY_COLORS, NO_COLOR, FORCE_COLOR, else on a terminal).")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, no_config: bool, color: str) -> None:
    """mbt: which business behaviour do your golden test cases check, which do they miss?

    \b
    Exit codes: 0 ok, 1 a gate or check failed, 2 the input could not be used,
    3 an internal error (a bug in mbt), 130 interrupted.
    --debug (or MBT_DEBUG=1) prints the traceback of an internal error.
    """
    # The configuration file gives the options their defaults (click's default_map); an option given wins.
    from pathlib import Path

    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.config import Config, find_config, load_config

    config = Config() if no_config else load_config(Path(config_path)) if config_path else find_config()
    ctx.default_map = config.default_map()
    ctx.obj = config
    ctx.meta["mbt.color"] = color


@cli.command(epilog=epilog("mbt check models/", "mbt check models/ --depth 30 --format sarif:mbt-check.sarif",
                           "mbt check   (the models of [tool.mbt] in pyproject.toml, or mbt.yaml)"))
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--depth", "depth", default=None, type=click.IntRange(min=1, max=10_000), metavar="N",
              help="How many steps invariant checking explores from the initial state  [default: 20].")
@formats_option
@multi_output_option
@root_option
@verbosity
def check(paths: tuple[str, ...], depth: int | None, formats: tuple[str, ...], output: str | None, root: str | None,
          quiet: bool, verbose: bool) -> None:
    """Check model files or folders: syntax, references, spans against sources, reachability, guards (z3),
    invariants (explored up to --depth steps, with the shortest counterexample)."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.report.formats import Options, parse_targets

    _check_verbosity(quiet, verbose)
    if not paths:
        raise MbtError("no model given: name model files or folders (or set `models` in the configuration "
                       "file, see docs/user-guide.md)")
    targets = parse_targets(formats, output, "check")
    report = _api().check(list(paths), depth=depth)
    full = _full_report(targets)
    _write_reports(targets, lambda t: _check_body(t.format, report, Options(
        style=_style(t.path), quiet=quiet, root=root, full_report=full, pretty=_pretty(t.path))))
    sys.exit(EXIT_FAILED if report.count("error") else EXIT_OK)


@cli.command(epilog=epilog("mbt elements models/recovery.fsm",
                           "mbt elements --model models/ --criterion forbidden --format json"))
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--model", "models", cls=Paths, help="Model files or folders (several after one flag, or repeated).")
@click.option("--criterion", "criteria", multiple=True, help="Only these criteria (repeatable).")
@format_option
@output_option
def elements(paths, models: tuple[str, ...], criteria: tuple[str, ...], fmt: str, output: str | None) -> None:
    """List the coverage elements of models per criterion, with stable ids, spans, status and weights."""
    found, _, _ = _models_and_goldens(paths, models, ())
    report = _api().elements(found, list(criteria) or None)
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.report import text as text_report

    emit(report.model_dump_json(indent=2) + "\n" if fmt == "json" else text_report.elements_text(report), output)


@cli.command(epilog=epilog("mbt coverage models/recovery.fsm goldens/ --gate gates/release.yaml",
                           "mbt coverage --model models/ --goldens goldens/*.jsonl --fail-under 80 -o coverage.json",
                           "mbt coverage ... --format junit:mbt.xml --format sarif:mbt.sarif --format html:htmlcov"))
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--model", "models", cls=Paths, help="Model files or folders (several after one flag, or repeated).")
@click.option("--goldens", "goldens", cls=Paths,
              help="Golden cases: JSONL/YAML/JSON files or folders, or - for standard input (several after one flag, "
                   "or repeated). Without goldens: the 0% baseline.")
@click.option("--gate", "gate", default=None, type=click.Path(), metavar="FILE", help="YAML gate file: thresholds per kind.criterion.")
@click.option("--no-gate", is_flag=True, help="Only report; never fail on the gate.")
@click.option("--show-covering", "show_covering", type=click.Choice(["some", "all"]), is_flag=False, flag_value="some",
              default=None, help="List which goldens exercise and verify each element (`all`: every one of them; "
                                 f"else the first {COVERING_CAP} per element, here and in the JSON report).")
@click.option("--show-uncovered", type=click.Choice(["some", "all"]), default="some", show_default=True,
              help="How many uncovered elements the text report lists per model.")
@click.option("--show-sources", is_flag=True,
              help="Add source-document coverage to the text report (units not modelled, unspecified parts).")
@click.option("--baseline", "baseline", default=None, type=click.Path(), metavar="FILE",
              help="Ratchet: fail only where this run is worse than this saved baseline (see --save-baseline); "
                   "its figures replace the default limits, a gate file's written limits still apply.")
@click.option("--save-baseline", "save_baseline", default=None, type=click.Path(), metavar="FILE",
              help="Save this run's coverage per model and criterion as a baseline for --baseline.")
@click.option("--jobs", "jobs", default=None, type=click.IntRange(min=1), metavar="N",
              help="Worker processes replaying a large golden set (default: the machine's cores; 1: none); "
                   "with --engine dask and no --scheduler, the local cluster's workers.")
@click.option("--engine", "engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where the golden set is replayed: this machine's processes, or a Dask cluster (mbt[dask]).")
@click.option("--scheduler", "scheduler", default=None, metavar="ADDRESS",
              help="With --engine dask: the Dask scheduler, e.g. tcp://host:8786 (default: a local cluster).")
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Parse and enumerate the models afresh, without the compiled-model cache (also MBT_NO_CACHE=1).")
@click.option("--fail-under", "fail_under", default=None, metavar="PCT",
              help="Fail when a model's criterion is verified below PCT percent (0-100), besides the gate.")
@click.option("--mutants", is_flag=True,
              help="Add the mutation run (mbt mutate): mutation score, surviving mutants, redundancy; the gate's "
                   "`<kind>.mutation` and `duplicates` rules need it.")
@click.option("--sample", "sample", default=None, type=click.IntRange(min=1), metavar="N",
              help="With --mutants: judge at most N mutants per model (a seeded sample).")
@click.option("--seed", "seed", default=0, type=int, help="Seed of --sample  [default: 0].")
@click.option("--levels", "levels", default=None, metavar="0,1,2|all",
              help="Also measure seed 004's levels 0 (embedding), 1 (source units aligned to goldens) and 2 "
                   "(propositions); every report names all five levels and what was measured (docs/levels.md).")
@click.option("--source", "sources", multiple=True, type=click.Path(), metavar="DOC",
              help="A source document no model declares, whose units count for levels 0-2 (repeatable).")
@click.option("--judge", "judge", default=None, metavar="NAME",
              help="With --levels: the LLM judge (openai:MODEL) asked where the embedded rules are not sure.")
@click.option("--propositions", "propositions", default=None, type=click.Path(), metavar="FILE",
              help="With --levels 2: the reviewed propositions file (mbt propositions), read before the rules.")
@click.option("--runs", "run_paths", cls=Paths, help="Observed runs for level 4 and representativeness (as mbt runs).")
@click.option("--probes", "probes", default=None, type=click.Path(), metavar="FILE",
              help="Judged held-out probes (as mbt probes): probe coverage at level 1.")
@click.option("--answers", "answers", cls=Paths, metavar="EVAL.json",
              help="`mbt eval --model ... --format json` reports: the say forbids, claims and contract items their "
                   "judged answers verify, shown beside verified and exercised (never added in).")
@formats_option
@multi_output_option
@root_option
@verbosity
def coverage(paths, models, goldens, gate, no_gate, show_covering, show_uncovered, show_sources, baseline,
             save_baseline, jobs, engine, scheduler, no_cache, fail_under, mutants, sample, seed, levels, sources,
             judge, propositions, run_paths, probes, answers, formats, output, root, quiet, verbose) -> None:
    """Replay golden cases on models and report coverage per model and criterion; gate CI on the result."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.report.formats import Options, parse_targets

    if gate and no_gate:
        raise MbtError("--gate and --no-gate cannot be used together")
    if baseline and no_gate:
        raise MbtError("--baseline is a gate rule; it cannot be used with --no-gate")
    if fail_under is not None and no_gate:
        raise MbtError("--fail-under is a gate rule; it cannot be used with --no-gate")
    percent = _percent(fail_under)
    _check_verbosity(quiet, verbose)
    targets = parse_targets(formats, output, "coverage")
    models, goldens, folders = _models_and_goldens(paths, models, goldens)
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.progress import Progress

    progress = Progress.for_terminal(quiet)  # a bar on stderr, only on a terminal
    run = _api().coverage_run(models, goldens, gate_path=gate, use_gate=not no_gate,
                              baseline_path=baseline, jobs=jobs, use_cache=not no_cache, engine=engine,
                              scheduler=scheduler,
                              covering_cap=None if show_covering == "all" else COVERING_CAP,
                              review=show_sources or any(t.format.review for t in targets),
                              cases=any(t.format.cases for t in targets), fail_under=percent,
                              command=COMMAND_LINE, progress=progress, mutants=mutants, sample=sample,
                              seed=seed, sorted_folders=folders,
                              levels=_level_options(levels, sources, judge, propositions, run_paths, probes),
                              answer_paths=list(answers) or None)
    limit = None if show_uncovered == "all" or verbose else 25
    full = _full_report(targets)

    def produce(t):
        return _coverage_body(t.format, run, Options(_style(t.path), show_covering is not None or verbose, limit,
                                                     show_sources, quiet, root, full, _pretty(t.path)))

    # The reports without diagrams are written first: a large model's layout never holds them back.
    _write_reports([t for t in targets if not t.format.diagrams], produce)
    drawn = [t for t in targets if t.format.diagrams]
    if drawn:
        _api().add_diagrams(run, progress)
        _write_reports(drawn, produce)
    if save_baseline:
        emit(_api().baseline_text(run.report), save_baseline)
    report = run.report
    sys.exit(EXIT_FAILED if report.gate is not None and not report.gate.passed else EXIT_OK)


max_cost_option = click.option(
    "--max-cost", "max_cost", default=None, type=click.FloatRange(min=0, min_open=True), metavar="DOLLARS",
    help="Stop sending to the LLM judges once they have cost this much (at the configuration file's prices): the "
         "verdicts not asked are not judged. Also `llm: max_cost`.")
max_requests_option = click.option(
    "--max-requests", "max_requests", default=None, type=click.IntRange(min=1), metavar="N",
    help="Send at most N requests to the LLM judges (retries included): the verdicts not asked are not judged. "
         "Also `llm: max_requests`.")


def _check_budget(judge_names: Sequence[str], max_cost: float | None, max_requests: int | None) -> None:
    """A budget given on the command line bounds LLM judges: with none chosen it would bound nothing, silently."""
    if (max_cost is not None or max_requests is not None) and all(n in ("embedded", "rules") for n in judge_names):
        option = "--max-cost" if max_cost is not None else "--max-requests"
        raise MbtError(f"{option} bounds what LLM judges cost, and no LLM judge is chosen: add --judge openai:MODEL")


def _budget_options(max_cost: float | None, max_requests: int | None) -> list[str]:
    """--max-cost / --max-requests as `--llm` settings: the budget's own options win over `--llm` and the file."""
    return [f"max_cost={max_cost!r}"] * (max_cost is not None) + [f"max_requests={max_requests}"] * (
        max_requests is not None)


@cli.command(epilog=epilog("mbt runs --model models/orders.fsm --runs models/runs/",
                           "mbt runs --model models/orders.fsm --runs models/runs/ --gate models/gates/seed-000-release.yaml",
                           "mbt runs --model models/orders.fsm --runs traces/ --regressions out/ --format json -o runs.json",
                           "mbt runs --model models/orders.fsm --runs traces/ --group-by version"))
@click.option("--model", "models", cls=Paths, required=True, help="Model files or folders (several after one flag).")
@click.option("--runs", "run_paths", cls=Paths, required=True,
              help="Observed runs: OTLP/JSON traces, JSON Lines of spans, chat transcripts (files or folders).")
@click.option("--goldens", "goldens", cls=Paths, help="Golden cases, for usage-weighted coverage and the gate.")
@click.option("--gate", "gate", default=None, metavar="FILE",
              help="YAML gate file: run metrics (seed 000's release gate) and coverage thresholds.")
@click.option("--no-gate", is_flag=True, help="Only report; never fail on the gate.")
@click.option("--regressions", "regressions", default=None, metavar="DIR",
              help="Write a regression golden per failing path into DIR (regressions-MODEL.jsonl).")
@click.option("--redact", "redact", multiple=True, type=click.Choice(["email", "phone", "text", "none"]),
              help="What regression goldens redact (repeatable)  [default: email, phone].")
@click.option("--redact-mode", "redact_mode", type=click.Choice(["hash", "drop"]), default="hash", show_default=True,
              help="Replace a redacted value by a hash of it (goldens still replay) or drop it.")
@click.option("--engine", "engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where the runs are judged: this process, or in parts on a Dask cluster (mbt[dask]).")
@click.option("--scheduler", "scheduler", default=None, metavar="ADDRESS",
              help="With --engine dask: the Dask scheduler, e.g. tcp://host:8786 (default: a local cluster).")
@click.option("--jobs", "jobs", default=None, type=click.IntRange(min=1), metavar="N",
              help="Worker processes judging a large run set (default: the machine's cores; 1: none); with "
                   "--engine dask, the local cluster's workers, or the parts for a --scheduler.")
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Parse and enumerate the models afresh, without the compiled-model cache (also MBT_NO_CACHE=1).")
@click.option("--group-by", "group_by", default=None,
              type=click.Choice(["version", "model", "request_model", "prompt", "tool_schema", "environment",
                                 "service", "suite"]),
              help="Every run metric and the first-deviation distribution per value: the agent's version "
                   "(service.version), the model, the prompt version, ...")
@click.option("--judge", "judge", default="embedded", show_default=True, metavar="NAME",
              help="What decides a `say` forbid's description where its phrases are not said: embedded (no network; "
                   "undecided is not judged), rules (its phrases alone), openai:MODEL (its server, key and prices "
                   "from the environment and the configuration file's `llm:`; what it cost is in the report).")
@max_cost_option
@max_requests_option
@save_option
@store_option
@baseline_set_option
@click.option("--format", "formats", multiple=True, metavar="NAME[:PATH]",
              help="Report format, repeatable, each optionally with its own path: text (default), json, markdown "
                   "(for $GITHUB_STEP_SUMMARY), xlsx (an Excel workbook: --format xlsx:runs.xlsx).")
@multi_output_option
def runs(models, run_paths, goldens, gate, no_gate, regressions, redact, redact_mode, engine, scheduler, jobs, no_cache,
         group_by, judge, max_cost, max_requests, save, store, baseline_set, formats, output) -> None:
    """Judge observed runs (traces, transcripts) on models: first deviations, run metrics, usage-weighted coverage,
    the release gate, regression goldens for failing runs."""
    if gate and no_gate:
        raise MbtError("--gate and --no-gate cannot be used together")
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.paths import expand
    from mbt.report.formats import parse_targets
    from mbt.report.runs_formats import RUNS_FORMATS, runs_body

    _check_budget([judge], max_cost, max_requests)
    targets = parse_targets(formats, output, "runs", RUNS_FORMATS)
    model_paths, paths = expand(list(models), "--model"), expand(list(run_paths), "--runs")
    golden_paths = expand(list(goldens), "--goldens") if goldens else None
    options = dict(gate_path=gate, use_gate=not no_gate, regressions=regressions,
                   redact=list(redact) if redact else None, redact_mode=redact_mode, engine=engine,
                   scheduler=scheduler, jobs=jobs, use_cache=not no_cache, group_by=group_by, judge=judge,
                   llm=_judging((), _budget_options(max_cost, max_requests))[1]
                   if judge not in ("embedded", "rules") else None)
    if save is not None or baseline_set is not None:
        stored = _api().runs_stored(model_paths, paths, golden_paths, save=save, store=store,
                                    store_config=_store_config(), baseline_set=baseline_set, **options)
        report = stored.report
        _saved_note(stored)
    elif store is not None:
        raise MbtError("--store names where result sets are kept: add --save (or --baseline-set NAME)")
    else:
        report = _api().runs(model_paths, paths, golden_paths, **options)
    _write_reports(targets, lambda t: runs_body(t.format.name, report))
    sys.exit(EXIT_FAILED if report.gate is not None and not report.gate.passed else EXIT_OK)


judge_option = click.option(
    "--judge", "judge_names", multiple=True, metavar="NAME|KEY=NAME",
    help="The judge: embedded (the default; no network), rules (assertions only) or openai:MODEL (any "
         "OpenAI-compatible server); KEY=NAME judges one criterion (repeatable): --judge safety=openai:MODEL. "
         "Each replaces the configuration file's `judge` / `judges` entry of the same key.")
llm_option = click.option(
    "--llm", "llm_options", multiple=True, metavar="KEY=VALUE",
    help="An LLM judge setting (repeatable): base_url, api_key_env (the variable holding the key), timeout, "
         "concurrency (requests in flight), retries, cache (true, false or a file), prices, max_cost, max_requests. "
         "Wins over OPENAI_BASE_URL / OPENAI_API_KEY, which win over the configuration file's `llm:`. The key itself "
         "is never taken from the command line.")


def _judging(judge_names: Sequence[str], llm_options: Sequence[str]):
    """The judges chosen, the LLM judge's settings and the custom criteria's rubrics: the command line over the
    environment over the configuration file (docs/judges.md, "Choosing the judges")."""
    import yaml

    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.config import LLM_KEYS, Config, llm_setting
    from mbt.judges.choice import choose_judges
    from mbt.judges.llm import llm_settings

    config = click.get_current_context().find_root().obj or Config()
    choice = choose_judges(judge_names, config.values.get("judge"), config.values.get("judges"))
    given = {}
    for item in llm_options:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if key == "api_key":  # never echoed: the value is the secret
            raise MbtError("--llm api_key: the key is never given on the command line (the process list and the "
                           "shell history would show it); set OPENAI_API_KEY, or --llm api_key_env=NAME")
        if not sep:  # the item is not echoed either: it may hold a key written with another separator
            raise MbtError(f"--llm takes KEY=VALUE ({', '.join(k for k in LLM_KEYS if k != 'api_key')})")
        try:
            value = yaml.safe_load(raw) if raw.strip() else raw
        except yaml.YAMLError:
            value = raw
        try:
            given[key] = llm_setting(key, raw if value is None else value, None)
        except ValueError as err:
            raise MbtError(f"--llm: {err}") from None
    return choice, llm_settings(given, config.values.get("llm"), os.environ), config.rubrics


@cli.command(name="eval", epilog=epilog(
    "mbt eval --goldens models/answers/goldens/ --runs models/answers/runs/",
    "mbt eval --goldens qna.xlsx --runs transcripts/ --criteria accuracy=2,safety=1,fluency=1 --threshold 2",
    "mbt eval --goldens qna.xlsx --runs transcripts/ --judge openai:gpt-4o-mini --format json -o eval.json",
    "mbt eval --goldens qna.xlsx --runs transcripts/ --judge safety=openai:llama-3.3-70b --format xlsx:eval.xlsx",
    "mbt eval --goldens qna.xlsx --runs transcripts/ --gate gates/answers.yaml",
    "mbt eval --goldens qna.xlsx --runs transcripts/ --show-prompt accuracy",
    "mbt eval --goldens models/answers/agent/ --agent openai-chat:http://127.0.0.1:8000/v1 --save",
    "mbt eval --goldens qna.xlsx --agent cmd:'python3 my_agent.py' --record sessions/ --concurrency 8",
    "mbt eval --goldens qna.xlsx --agent openai-chat:URL --retry-errors qna_TestResult_20250106-083000"))
@click.option("--goldens", "goldens", cls=Paths, required=True,
              help="Golden cases with expected answers: seed 001 sheets (.xlsx, .csv), JSONL, YAML.")
@click.option("--runs", "run_paths", cls=Paths,
              help="The agent's recorded answers: chat transcripts, traces (files or folders); or --agent.")
@click.option("--agent", "agent", default=None, metavar="SPEC",
              help="Drive the live agent instead of reading recorded runs: openai-chat:URL, http:URL, "
                   "python:MODULE:FUNCTION or cmd:COMMAND (docs/agents.md); one session per case.")
@click.option("--record", "record", default=None, type=click.Path(), metavar="DIR",
              help="With --agent: write each case's session as a transcript into DIR (new or empty), to re-judge "
                   "offline with --runs DIR.")
@click.option("--timeout", "timeout", default=None, type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="With --agent: each turn's time limit; a late turn is an agent error  [default: the "
                   "configuration file's agent timeout, else 60].")
@click.option("--concurrency", "concurrency", default=None, type=click.IntRange(min=1), metavar="N",
              help="With --agent: the most cases in flight at once  [default: agent concurrency, else 4].")
@click.option("--model", "models", cls=Paths,
              help="Optional behaviour models: the same runs are also judged on them, as `mbt runs` does.")
@judge_option
@llm_option
@click.option("--criteria", "criteria", default=None, metavar="KEY=WEIGHT,...",
              help="Criteria and weights, e.g. accuracy=2,safety=1,fluency=1 (0 disables; a custom criterion takes "
                   "its rubric from the configuration file)  [default: accuracy=1].")
@click.option("--threshold", "threshold", default=None, metavar="N",
              help="Overall threshold: a case passes when its passed weights add up to MORE than N  [default: 0].")
@click.option("--gate", "gate", default=None, type=click.Path(), metavar="FILE",
              help="YAML gate file: answers.pass_rate, answers.KEY.pass_rate, must_not_violated, judge_errors "
                   "(default: every case passes, no judge error, no must_not phrase said, no invalid case).")
@click.option("--show-prompt", "show_prompt", default=None, metavar="KEY",
              help="Print the LLM judge's request for criterion KEY on each judged turn, and judge nothing.")
@click.option("--retry-errors", "retry_errors", is_flag=False, flag_value="", default=None, metavar="[NAME]",
              help="The LLM judge re-asks only the verdicts its cache holds as errors (others come from the cache). "
                   "With NAME, a stored result set: only its errored cases run again (with --agent: driven again; "
                   "with --runs: judged again), in place.")
@max_cost_option
@max_requests_option
@click.option("--jobs", "jobs", default=None, type=click.IntRange(min=1), metavar="N",
              help="With --model: worker processes judging the runs on the models, as `mbt runs --jobs` "
                   "(default: 1).")
@click.option("--format", "formats", multiple=True, metavar="NAME[:PATH]",
              help="Report format, repeatable, each optionally with its own path: text (default), json, xlsx "
                   "(seed 001's Excel export: --format xlsx:eval.xlsx).")
@save_option
@click.option("--resume", "resume", default=None, metavar="NAME",
              help="Continue the interrupted result set NAME (running with its writer gone, failed or cancelled), "
                   "run with the same inputs and options: the cases it holds are kept, the rest judged (with "
                   "--agent: driven and judged) and added.")
@store_option
@baseline_set_option
@multi_output_option
def eval_command(goldens, run_paths, agent, record, timeout, concurrency, models, judge_names, llm_options, criteria,
                 threshold, gate, show_prompt, retry_errors, max_cost, max_requests, jobs, save, resume, store,
                 baseline_set, formats, output) -> None:
    """Judge the agent's answers against the goldens' expected answers, per criterion; no model needed. The answers
    are recorded runs (--runs), or come from the live agent (--agent), which is then sent each case's turns in a
    session of its own. Exit 1 when the gate fails (by default unless every case passes overall: not judged is
    never a pass, and a case the agent did not answer is an error)."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.paths import expand
    from mbt.report.eval_formats import EVAL_FORMATS, eval_body
    from mbt.report.formats import parse_targets

    config_agent = dict(click.get_current_context().find_root().obj.values.get("agent") or {})
    if agent is not None and run_paths:
        raise MbtError("--agent drives the live agent and --runs reads recorded runs: give one of the two")
    if agent is None and not run_paths and config_agent.get("spec"):
        agent = config_agent["spec"]
    if agent is None and not run_paths:
        raise MbtError("no answers to judge: give --runs PATH (recorded runs) or --agent SPEC (the live agent)")
    if agent is None and any(v is not None for v in (record, timeout, concurrency)):
        raise MbtError("--record, --timeout and --concurrency go with --agent SPEC")
    golden_paths = expand(list(goldens), "--goldens")
    paths = expand(list(run_paths), "--runs") if run_paths else []
    choice, settings, rubrics = _judging(judge_names, [*llm_options, *_budget_options(max_cost, max_requests)])
    _check_budget([choice.default, *choice.per_criterion.values()], max_cost, max_requests)
    if show_prompt is not None and agent is not None:
        raise MbtError("--show-prompt shows the judge's requests on recorded runs: record the agent first "
                       "(--agent SPEC --record DIR), then --runs DIR --show-prompt KEY")
    if show_prompt is not None:
        prompts = _api().eval_prompts(golden_paths, paths, show_prompt, criteria=criteria, threshold=threshold,
                                      rubrics=rubrics)
        emit("\n".join(prompts) + "\n" if prompts else "no judged turn: no prompt to show\n", output)
        sys.exit(EXIT_OK)
    targets = parse_targets(formats, output, "eval", EVAL_FORMATS)
    options = dict(judge=choice.default, judges=choice.per_criterion, criteria=criteria, threshold=threshold,
                   rubrics=rubrics, llm=settings, retry_errors=retry_errors is not None, gate_path=gate,
                   model_paths=expand(list(models), "--model") if models else None, jobs=jobs)
    driving = dict(agent=agent, record=record, timeout=timeout, concurrency=concurrency, agent_config=config_agent)
    if retry_errors:  # a stored set's errored cases, again, in place
        if save is not None or resume is not None:
            raise MbtError("--retry-errors NAME updates that set in place: leave out --save and --resume")
        stored = _api().eval_retry(retry_errors, golden_paths, run_paths=paths or None, store=store,
                                   store_config=_store_config(), baseline_set=baseline_set, **driving, **options)
        report = stored.report
        _note(f"mbt: result set `{retry_errors}`: {len(stored.rerun or [])} errored case(s) run again, "
              f"{report.errors} case(s) in error now: mbt results show {shlex_quote(retry_errors)}", False)
    elif agent is not None:
        stored = _api().eval_agent(golden_paths, save=save, store=store, store_config=_store_config(),
                                   baseline_set=baseline_set, resume=resume, **driving, **options)
        report = stored.report
        _saved_note(stored)
    elif save is not None or baseline_set is not None or resume is not None:
        stored = _api().eval_stored(golden_paths, paths, save=save, store=store, store_config=_store_config(),
                                    baseline_set=baseline_set, resume=resume, **options)
        report = stored.report
        _saved_note(stored)
    elif store is not None:
        raise MbtError("--store names where result sets are kept: add --save (or --baseline-set NAME)")
    else:
        report = _api().eval(golden_paths, paths, **options)
    _write_reports(targets, lambda t: eval_body(t.format.name, report, pretty=True))
    sys.exit(EXIT_OK if report.gate.passed else EXIT_FAILED)


@cli.command(name="serve", epilog=epilog(
    "mbt serve --model models/recovery.fsm --port 8000",
    "mbt serve --model models/recovery.fsm --fault wrong-argument --url-file build/agent.url",
    "mbt serve --model models/orders.fsm --precondition customer_id=C-1001",
    "mbt eval --goldens models/answers/agent/ --agent openai-chat:http://127.0.0.1:8000/v1"))
@click.option("--model", "models", cls=Paths, required=True,
              help="The state machine model(s) to serve (a file or folder; with several, a request's `model` names "
                   "one).")
@click.option("--host", "host", default="127.0.0.1", show_default=True, metavar="HOST",
              help="The address to listen on (another than 127.0.0.1 makes the agent reachable from the network).")
@click.option("--port", "port", default=8000, show_default=True, type=click.IntRange(0, 65535), metavar="N",
              help="The port (0: a free one, printed and written to --url-file).")
@click.option("--fault", "fault", default=None,
              type=click.Choice(["wrong-argument", "skipped-confirmation", "premature-success"]),
              help="A misbehaviour to inject (docs/agents.md).")
@click.option("--api-key-env", "api_key_env", default=None, metavar="NAME",
              help="Require `Authorization: Bearer KEY`, KEY being the value of the environment variable NAME.")
@click.option("--precondition", "precondition", multiple=True, metavar="KEY=VALUE",
              help="Where every conversation starts, as a golden's precondition (repeatable): state=NAME, a "
                   "variable (customer_id=C-1001), discarded.NAME=VALUE.")
@click.option("--url-file", "url_file", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="Write the base URL (http://HOST:PORT/v1) to FILE once listening (for scripts).")
@click.option("-v", "--verbose", is_flag=True, help="A line per request on stderr.")
def serve_command(models, host, port, fault, api_key_env, precondition, url_file, verbose) -> None:
    """Serve mbt's reference machine of a state machine model as an OpenAI-compatible chat endpoint (POST
    /v1/chat/completions, tool calls included), a fault injected on request, until interrupted (Ctrl-C) or
    terminated. Its answers are built from the model's words (docs/agents.md)."""
    import signal
    from pathlib import Path

    import yaml

    from mbt.paths import expand

    start = {}
    for item in precondition:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise MbtError(f"--precondition {item!r}: expected KEY=VALUE (state=NAME, customer_id=C-1001)")
        try:
            start[key.strip()] = yaml.safe_load(raw) if raw.strip() else raw
        except yaml.YAMLError:
            start[key.strip()] = raw
    server = _api().serve(expand(list(models), "--model"), host=host, port=port, fault=fault,
                          api_key_env=api_key_env, log=sys.stderr if verbose else None, precondition=start)

    def stop(signum, frame):  # SIGTERM (a script's kill): stop serving, exit 0
        raise SystemExit(EXIT_OK)

    signal.signal(signal.SIGTERM, stop)
    names = ", ".join(sorted(server.agents))
    click.echo(f"mbt serve: {server.url} (POST /v1/chat/completions) serving {names}"
               + (f" with fault {fault}" if fault else ""))
    sys.stdout.flush()
    if url_file is not None:
        try:
            Path(url_file).parent.mkdir(parents=True, exist_ok=True)
            Path(url_file).write_text(server.url + "\n", encoding="utf-8")
        except OSError as err:
            server.stop()
            raise MbtError(f"--url-file {url_file}: cannot write it: {err.strerror or err}") from None
    server.serve()


@cli.group(name="judge", epilog=epilog("mbt judge calibrate --labels models/answers/labels.jsonl",
                                       "mbt judge sensitivity --goldens models/answers/goldens/"))
def judge_group() -> None:
    """Judge the judge: its agreement with human labels, and whether it catches wrong answers."""


@judge_group.command(name="calibrate", epilog=epilog(
    "mbt judge calibrate --labels models/answers/labels.jsonl",
    "mbt judge calibrate --labels labels.jsonl --judge openai:llama-3.3-70b --format json -o calibration.json",
    "mbt judge calibrate --labels exported.jsonl --judge recorded"))
@click.option("--labels", "labels", required=True, type=click.Path(), metavar="FILE",
              help="JSON Lines of labelled answers: actual, expected, label (pass | fail), optional criterion "
                   "(accuracy), question, id, judge (a recorded verdict).")
@judge_option
@llm_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@output_option
def judge_calibrate(labels, judge_names, llm_options, fmt, output) -> None:
    """Agreement, Cohen's kappa, the confusion table and the decided share of the judge against human labels,
    per criterion (`--judge recorded`: the verdicts the file records)."""
    choice, settings, rubrics = _judging(judge_names, llm_options)
    report = _api().judge_calibrate(labels, judge=choice.default, judges=choice.per_criterion, rubrics=rubrics,
                                    llm=settings)
    if fmt == "json":
        emit(report.model_dump_json(indent=2) + "\n", output)
    else:
        from mbt.report.judge_text import calibration_text

        emit(calibration_text(report), output)
    sys.exit(EXIT_OK)


@judge_group.command(name="sensitivity", epilog=epilog(
    "mbt judge sensitivity --goldens models/answers/goldens/",
    "mbt judge sensitivity --goldens qna.xlsx --judge openai:llama-3.3-70b --format json"))
@click.option("--goldens", "goldens", cls=Paths, required=True,
              help="Golden cases whose expected answers are mutated (sheets, JSONL, YAML).")
@judge_option
@llm_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@output_option
def judge_sensitivity(goldens, judge_names, llm_options, fmt, output) -> None:
    """Mutate the goldens' expected answers into wrong ones (a number changed, a negation inserted, a must_not
    phrase inserted, a step dropped, an instruction to the judge injected) and count, per operator, the mutants the
    accuracy judge catches, misses or leaves undecided; the controls are the expected answers themselves."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.paths import expand

    choice, settings, rubrics = _judging(judge_names, llm_options)
    report = _api().judge_sensitivity(expand(list(goldens), "--goldens"), judge=choice.default,
                                      judges=choice.per_criterion, rubrics=rubrics, llm=settings)
    if fmt == "json":
        emit(report.model_dump_json(indent=2) + "\n", output)
    else:
        from mbt.report.judge_text import sensitivity_text

        emit(sensitivity_text(report), output)
    sys.exit(EXIT_OK)


def _json_out(model, output: str | None) -> str:
    return model.model_dump_json(indent=2 if _pretty(output) else None) + "\n"


@cli.group(epilog=epilog("mbt results list --status done --type eval --since 2025-01-01",
                         "mbt results show card-qna_TestResult_20250106-083000 --result fail --search refund",
                         "mbt results compare release-1.4 release-1.5"))
def results() -> None:
    """The result sets kept by `mbt eval --save` and `mbt runs --save` (docs/results.md): list, show, export,
    rename, delete and compare them."""


@results.command(name="list", epilog=epilog("mbt results list", "mbt results list --search card --status done",
                                            "mbt results list --type runs --executor github --since 2025-01-01"))
@click.option("--search", "search", default=None, metavar="TEXT", help="Only sets whose name holds TEXT (any case).")
@click.option("--status", "statuses", multiple=True, type=click.Choice(["running", "done", "failed", "cancelled"]),
              help="Only sets of this status (repeatable).")
@click.option("--type", "run_types", multiple=True, type=click.Choice(["eval", "runs", "coverage"]),
              help="Only sets of this run type (repeatable).")
@click.option("--executor", "executor", default=None, metavar="TEXT",
              help="Only sets whose executor (user:NAME, or the CI job) holds TEXT (any case).")
@click.option("--since", "since", default=None, metavar="DATE", help="Only sets started on or after DATE (YYYY-MM-DD "
              "or an ISO 8601 time; UTC unless it says).")
@click.option("--until", "until", default=None, metavar="DATE", help="Only sets started on or before DATE.")
@click.option("--limit", "limit", default=None, type=click.IntRange(min=1), metavar="N", help="At most N sets.")
@store_option
@format_option
@output_option
def results_list(search, statuses, run_types, executor, since, until, limit, store, fmt, output) -> None:
    """List the result sets, newest first: status, start, duration, run type, executor, cases and pass rate."""
    from mbt.report.results_text import list_text

    found = _api().results_list(store=store, store_config=_store_config(), search=search, statuses=statuses,
                                run_types=run_types, executor=executor, since=since, until=until, limit=limit)
    emit(_json_out(found, output) if fmt == "json" else list_text(found), output)
    sys.exit(EXIT_OK)


result_filter_options = [
    click.option("--turns", "turns", default=None, type=click.Choice(["single", "multi"]),
                 help="Only single-turn or multi-turn cases."),
    click.option("--result", "results_", multiple=True,
                 type=click.Choice(["pass", "fail", "not_judged", "error", "ok"]),
                 help="Only cases of this overall result (repeatable); ok: run without error."),
    click.option("--search", "search", default=None, metavar="TEXT",
                 help="Only cases whose questions or actual answers hold TEXT (any case)."),
]


def _result_filters(command):
    for option in reversed(result_filter_options):
        command = option(command)
    return command


@results.command(name="show", epilog=epilog("mbt results show NAME", "mbt results show NAME --turns multi --result fail "
                                            "--search 'refund'", "mbt results show NAME --case card-qna/3"))
@click.argument("name")
@click.option("--case", "case_key", default=None, metavar="KEY",
              help="One case in detail: the explanation per criterion, the questions with expected and actual "
                   "answers, the session (its history).")
@_result_filters
@click.option("--limit", "limit", default=100, show_default=True, type=click.IntRange(min=0), metavar="N",
              help="At most N cases listed (0: all).")
@click.option("--offset", "offset", default=0, type=click.IntRange(min=0), metavar="N",
              help="Skip the first N matching cases.")
@store_option
@format_option
@output_option
def results_show(name, case_key, turns, results_, search, limit, offset, store, fmt, output) -> None:
    """Show a result set: its overview (cases run successfully and with errors, passes overall and per criterion)
    and its cases, filtered and searched as seed 001's detail view."""
    from mbt.report.results_text import case_text, show_text

    if case_key is not None:
        if turns or results_ or search or offset:
            raise MbtError("--case shows one case: the list's filters do not apply to it")
        detail = _api().results_case(name, case_key, store=store, store_config=_store_config())
        emit(_json_out(detail, output) if fmt == "json" else case_text(detail), output)
        sys.exit(EXIT_OK)
    view = _api().results_show(name, store=store, store_config=_store_config(), turns=turns, results=results_,
                               search=search, limit=limit or None, offset=offset)
    emit(_json_out(view, output) if fmt == "json" else show_text(view), output)
    sys.exit(EXIT_OK)


@results.command(name="export", epilog=epilog("mbt results export NAME -o results.xlsx",
                                              "mbt results export NAME --format json -o results.json",
                                              "mbt results export NAME --result fail -o failures.xlsx"))
@click.argument("name")
@_result_filters
@click.option("--format", "fmt", type=click.Choice(["json", "xlsx"]), default=None,
              help="json or xlsx (Excel: an overview sheet, the cases as seed 001's detail view, the turns)  "
                   "[default: from -o's suffix, else json].")
@click.option("-o", "--output", "output", default=None, type=click.Path(), metavar="FILE",
              help="Write the export to FILE (xlsx needs one) instead of stdout.")
@store_option
def results_export(name, turns, results_, search, fmt, output, store) -> None:
    """Export a result set with every case: JSON, or an Excel workbook."""
    from mbt.report.results_json import results_json
    from mbt.report.xlsx_results import results_xlsx

    chosen = fmt or ("xlsx" if output and output.lower().endswith(".xlsx") else "json")
    if chosen == "xlsx" and output in (None, "-"):
        raise MbtError("--format xlsx writes a workbook: give it a file with -o FILE.xlsx")
    with _api().results_export(name, store=store, store_config=_store_config(), turns=turns, results=results_,
                               search=search) as found:
        if chosen == "xlsx":
            emit(results_xlsx(found.info, found.overview, found.cases(), found.usage), output)
        else:
            emit(results_json(found.info, found.overview, found.summary, found.cases(), found.usage), output)
    sys.exit(EXIT_OK)


@results.command(name="site", epilog=epilog("mbt results site build/results", "mbt results site build/results --set "
                                            "release-1.4 --set release-1.5", "mbt results site site/ --type eval "
                                            "--since 2025-01-01"))
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--set", "names", multiple=True, metavar="NAME", help="Only this result set (repeatable).")
@click.option("--search", "search", default=None, metavar="TEXT", help="Only sets whose name holds TEXT (any case).")
@click.option("--status", "statuses", multiple=True, type=click.Choice(["running", "done", "failed", "cancelled"]),
              help="Only sets of this status (repeatable).")
@click.option("--type", "run_types", multiple=True, type=click.Choice(["eval", "runs", "coverage"]),
              help="Only sets of this run type (repeatable).")
@click.option("--executor", "executor", default=None, metavar="TEXT", help="Only sets whose executor holds TEXT.")
@click.option("--since", "since", default=None, metavar="DATE", help="Only sets started on or after DATE.")
@click.option("--until", "until", default=None, metavar="DATE", help="Only sets started on or before DATE.")
@click.option("--limit", "limit", default=None, type=click.IntRange(min=1), metavar="N", help="At most N sets, newest first.")
@store_option
def results_site(folder, names, search, statuses, run_types, executor, since, until, limit, store) -> None:
    """Write the HTML viewer of the result sets into FOLDER: a static site to open offline (FOLDER/index.html):
    the list of sets, each set's overview and its cases filtered and searched, each case with its explanation,
    answers and history. Sets unchanged since the last time keep their pages."""
    from pathlib import Path

    from mbt.report.core import check_folder_target
    from mbt.report.site import Site

    if names and (search or statuses or run_types or executor or since or until or limit):
        raise MbtError("--set names the sets; the list's filters (--search, --status, ...) choose them otherwise: "
                       "give one or the other")
    check_folder_target(folder)
    with _api().results_site(store=store, store_config=_store_config(), names=names, search=search,
                             statuses=statuses, run_types=run_types, executor=executor, since=since, until=until,
                             limit=limit) as chosen:
        site = Site(chosen.sets, Path(folder))
        emit(site.files(), folder)
    _note(f"mbt: the viewer of {len(chosen.sets)} result set(s) written to {folder} ({len(site.reused)} unchanged, "
          f"kept): open {Path(folder) / 'index.html'}", False)
    sys.exit(EXIT_OK)


@results.command(name="rename", epilog=epilog("mbt results rename card-qna_TestResult_20250106-083000 release-1.5"))
@click.argument("old")
@click.argument("new")
@store_option
@format_option
def results_rename(old, new, store, fmt) -> None:
    """Rename a result set (names are unique)."""
    renamed = _api().results_rename(old, new, store=store, store_config=_store_config())
    emit(_json_out(renamed, None) if fmt == "json" else f"renamed result set `{old}` to `{renamed.name}`\n", None)
    sys.exit(EXIT_OK)


@results.command(name="delete", epilog=epilog("mbt results delete card-qna_TestResult_20250106-083000",
                                              "mbt results delete old-1 old-2"))
@click.argument("names", nargs=-1, required=True)
@store_option
@format_option
def results_delete(names, store, fmt) -> None:
    """Delete result sets and their cases; all named sets or none (an unknown name deletes nothing)."""
    import json

    deleted = _api().results_delete(list(names), store=store, store_config=_store_config())
    emit(json.dumps({"deleted": deleted}) + "\n" if fmt == "json"
         else "".join(f"deleted result set `{n}`\n" for n in deleted), None)
    sys.exit(EXIT_OK)


@results.command(name="compare", epilog=epilog("mbt results compare release-1.4 release-1.5",
                                               "mbt results compare A B --case card-qna/3 --format json",
                                               "mbt results compare A B --sessions"))
@click.argument("first")
@click.argument("second")
@click.option("--case", "cases", multiple=True, metavar="KEY",
              help="Diff this case's two sessions turn by turn: answer, tool calls, commands, stop reason "
                   "(repeatable).")
@click.option("--sessions", "sessions", is_flag=True, help="Diff the sessions of every flipped case.")
@store_option
@format_option
@output_option
def results_compare(first, second, cases, sessions, store, fmt, output) -> None:
    """Compare result set A with B: the cases that flipped (pass -> fail first), metric changes with 95% confidence
    intervals, the first-deviation distribution side by side (per agent version where a set holds several), and
    session diffs."""
    from mbt.report.results_text import compare_text

    found = _api().results_compare(first, second, store=store, store_config=_store_config(), cases=cases,
                                   flipped_sessions=sessions)
    emit(_json_out(found, output) if fmt == "json" else compare_text(found), output)
    sys.exit(EXIT_OK)


@cli.command(epilog=epilog("mbt render --model models/recovery.fsm --goldens goldens/ -o recovery.svg",
                           "mbt render --model models/recovery.fsm --focus confirming_email --depth 2 -o part.svg",
                           "mbt render --model models/refund.dt -o refund.md"))
@click.option("--model", "models", cls=Paths, required=True, help="Model files or folders.")
@click.option("--goldens", "goldens", cls=Paths, help="Golden cases to paint coverage with.")
@click.option("-o", "--output", "output", required=True, type=click.Path(), metavar="FILE",
              help="The diagram: .dot, .svg or .png (state machines); .md or .html (tables, policies).")
@click.option("--name", "name", default=None, help="The model to draw when the files hold several.")
@click.option("--focus", default=None, metavar="STATE", help="Draw only the neighbourhood of this state.")
@click.option("--depth", default=1, show_default=True, type=click.IntRange(min=0),
              help="With --focus: how many transitions away from the state to draw.")
@click.option("--path", "path", default=None, metavar="KEYS|FILE.json",
              help="Highlight a path: transition keys separated by commas, or a JSON file of transition keys or "
                   "events (e.g. an invariant's counterexample).")
@click.option("--clusters", type=click.Choice(["auto", "none", "prefix", "scc"]), default="auto", show_default=True,
              help="Group states: by name prefix, by cycle (strongly connected component); auto: by cycle above "
                   "30 states.")
@click.option("--gate", "gate", default=None, type=click.Path(), metavar="FILE", help="Gate file whose waivers the diagram shows.")
@verbosity
def render(models, goldens, output, name, focus, depth, path, clusters, gate, quiet, verbose) -> None:
    """Draw a model for review (a state machine as a diagram), with coverage painted on it when goldens are given."""
    if depth != 1 and focus is None:
        raise MbtError("--depth needs --focus STATE")
    models, goldens, _ = _models_and_goldens((), models, goldens)
    rendered = _api().render(models, output, goldens or None, name=name, focus=focus, depth=depth,
                          path=path, clusters=clusters, gate_path=gate)
    emit(rendered.data, output)
    if rendered.note:
        _note(f"mbt render: note: {rendered.note}", quiet)
    _note(f"mbt render: wrote {output} ({rendered.model})", quiet)
    sys.exit(EXIT_OK)


@cli.command(epilog=epilog("mbt generate --model models/recovery.fsm --goldens goldens/ --out tests/generated",
                           "mbt generate --model models/recovery.fsm --all --criterion transition --out suite",
                           "mbt generate --probes --model refund.fsm --goldens goldens/ --out probes.jsonl"))
@click.option("--model", "models", cls=Paths, required=True, help="Model files or folders.")
@click.option("--goldens", "goldens", cls=Paths,
              help="Golden cases whose gaps to fill (repeatable; none: every element is a gap).")
@click.option("--out", "out", required=True, type=click.Path(), metavar="DIR",
              help="Folder to write into (nothing is written outside); with --probes, the probe file.")
@click.option("--criterion", "criteria", multiple=True,
              help="Gaps of these criteria only (repeatable); with --all, the suite's criterion.")
@click.option("--all", "full", is_flag=True,
              help="A full suite covering every transition (or transition pair) instead of the gaps.")
@click.option("--max-depth", "max_depth", default=None, type=click.IntRange(min=1, max=10_000), metavar="N",
              help="Longest witness run searched, in steps (default 40).")
@click.option("--max-paths", "max_paths", default=None, type=click.IntRange(min=1), metavar="N",
              help="Run prefixes a witness search may explore before it gives up (default 5000).")
@click.option("--precondition", "preconditions", multiple=True, metavar="MAPPING",
              help="A start configuration witnesses may begin from, as YAML/JSON: '{state: s, var: value}' "
                   "(repeatable).")
@click.option("--force", is_flag=True, help="Overwrite generated files even when they were edited.")
@click.option("--kill", is_flag=True,
              help="Tests that kill the mutants the goldens let survive (mbt mutate) instead of the gap tests.")
@click.option("--probes", "probes", is_flag=True,
              help="Held-out probes per source unit, judged against the goldens, written to --out as the probe file "
                   "mbt probes reads (seed 004; docs/levels.md), instead of tests.")
@click.option("--generator", "generators", multiple=True, metavar="NAME",
              help="With --probes: unit-text, model-words (both by default) or openai:MODEL (repeatable).")
@click.option("--per-unit", "per_unit", default=None, type=click.IntRange(min=1), metavar="N",
              help="With --probes: probes per unit and generator, at most  [default: 3].")
@click.option("--source", "sources", multiple=True, type=click.Path(), metavar="DOC",
              help="With --probes: a source document no model declares (repeatable).")
@click.option("--judge", "judge", default=None, metavar="NAME",
              help="With --probes: the LLM judge (openai:MODEL) asked where the embedded alignment is not sure.")
@click.option("--refresh", is_flag=True, help="With --probes: ask an LLM generator again for every unit.")
@format_option
def generate(models, goldens, out, criteria, full, max_depth, max_paths, preconditions, force, kill, probes,
             generators, per_unit, sources, judge, refresh, fmt) -> None:
    """Write test skeletons (pytest + golden-case stubs) for the coverage gaps, or a full suite with --all; or, with
    --probes, held-out probes for probe coverage."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.report.generate_text import generate_text

    probe_options = {"--generator": generators, "--per-unit": per_unit, "--source": sources, "--judge": judge,
                     "--refresh": refresh}
    if probes:
        test_options = {"--criterion": criteria, "--all": full, "--max-depth": max_depth, "--max-paths": max_paths,
                        "--precondition": preconditions, "--force": force, "--kill": kill}
        given = [name for name, value in test_options.items() if value]
        if given:
            raise MbtError(f"{given[0]} writes tests; it does not apply with --probes")
        _generate_probes(models, goldens, out, generators, per_unit, sources, judge, refresh, fmt)
        return
    given = [name for name, value in probe_options.items() if value]
    if given:
        raise MbtError(f"{given[0]} is an option of --probes: add --probes")
    suite = None
    if kill and full:
        raise MbtError("--kill and --all cannot be used together")
    if full:
        if len(criteria) > 1:
            raise MbtError("--all takes one --criterion (transition or transition-pair)")
        suite = criteria[0] if criteria else "transition"
    models, goldens, _ = _models_and_goldens((), models, goldens)
    report = _api().generate(models, goldens, out, criteria=None if full else list(criteria) or None,
                          suite=suite, max_depth=max_depth, max_paths=max_paths,
                          preconditions=[_mapping(p) for p in preconditions], force=force, kill=kill,
                          progress=_progress())
    emit(report.model_dump_json(indent=2) + "\n" if fmt == "json" else generate_text(report, _style(None)), None)
    for kept in report.kept_edited:
        click.echo(f"{out}/{kept.path}: edited since mbt generated it, so it was kept; the new version is "
                   f"{out}/{kept.beside} (merge it, or rerun with --force)", err=True)
    sys.exit(EXIT_FAILED if report.kept_edited else EXIT_OK)


def _generate_probes(models, goldens, out, generators, per_unit, sources, judge, refresh, fmt) -> None:
    """`mbt generate --probes`: the probe file written to `out`, what generating found on stderr, the probes' report
    (as `mbt probes` gives it) on stdout."""
    from mbt.paths import expand
    from mbt.report.probes_text import probes_text

    made = _api().generate_probes(expand(list(models), "--model"), expand(list(goldens), "--goldens") if goldens
                                  else [], out, list(generators) or None, per_unit, list(sources), judge, refresh)
    emit(made.text, out)
    p = made.probes
    judged = [d.covered for d in p.probes]
    click.echo(f"mbt generate: {len(p.probes)} probe(s) of {p.units} unit(s) from {', '.join(p.generators)} written "
               f"to {out}: {judged.count(True)} covered, {judged.count(False)} not covered, {judged.count(None)} not "
               "judged" + (f" ({p.kept} kept from the file unchanged)" if p.kept else ""), err=True)
    for generator, units in p.short.items():
        click.echo(f"note: {generator}: {len(units)} unit(s) gave fewer probes than asked for: {', '.join(units)}",
                   err=True)
    for line in [*p.failures, *p.not_held_out]:
        click.echo(f"warning: {line}", err=True)
    emit(made.report.model_dump_json(indent=2) + "\n" if fmt == "json" else probes_text(made.report), None)
    sys.exit(EXIT_OK)


def _level_options(levels: str | None, sources: tuple[str, ...], judge: str | None, propositions: str | None,
                   run_paths: tuple[str, ...], probes: str | None):
    """--levels and the inputs of seed 004's levels as mbt.api.LevelOptions."""
    from mbt.paths import expand

    asked: tuple[int, ...] = ()
    if levels is not None:
        text = levels.strip().lower()
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if text == "all":
            asked = (0, 1, 2)
        elif not parts or any(p not in ("0", "1", "2") for p in parts):
            raise MbtError(f"--levels {levels}: give levels among 0, 1, 2 (e.g. 0,1,2), or all; level 3 is always "
                           "measured and level 4 with --runs")
        else:
            asked = tuple(sorted({int(p) for p in parts}))
    if (judge or propositions) and not asked:
        raise MbtError(f"{'--judge' if judge else '--propositions'} is read by the levels it serves: add --levels")
    if propositions and 2 not in asked:
        raise MbtError("--propositions is read by level 2: add 2 to --levels")
    return _api().LevelOptions(asked=asked, sources=list(sources), judge=judge, propositions=propositions,
                               runs=expand(list(run_paths), "--runs") if run_paths else [], probes=probes)


def _percent(value) -> float | None:
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.config import parse_percent

    if value is None:
        return None
    try:
        return parse_percent(value)
    except ValueError as err:
        raise MbtError(f"--fail-under: {err}") from None


def _mapping(text: str) -> dict:
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise MbtError(f"--precondition {text!r} is not valid YAML/JSON: {err}") from None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise MbtError(f"--precondition {text!r} must be a mapping such as '{{state: idle, retries: 0}}'")
    return value


mutation_format = click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
                               show_default=True, help="Report format (JSON follows docs/schemas/).")
sample_option = click.option("--sample", "sample", default=None, type=click.IntRange(min=1), metavar="N",
                             help="Judge at most N mutants per model, a seeded uniform sample (large models).")
seed_option = click.option("--seed", "seed", default=0, show_default=True, type=int, help="Seed of --sample.")


@cli.command(epilog=epilog("mbt mutate --model models/ --goldens models/goldens/",
                           "mbt mutate --model models/recovery.fsm --goldens goldens/ --show-survivors all",
                           "mbt mutate --model big.fsm --goldens goldens/ --sample 500 --format json -o m.json"))
@click.argument("paths", nargs=-1)
@click.option("--model", "models", cls=Paths, help="Model files or folders (several after one flag, or repeated).")
@click.option("--goldens", "goldens", cls=Paths, help="Golden cases: files or folders, or - for standard input.")
@sample_option
@seed_option
@click.option("--time-limit", "time_limit", default=None, type=click.FloatRange(min=0.1), metavar="SECONDS",
              help="How long z3 may search the smallest equivalent set before the greedy cover is used  [default: 10].")
@click.option("--show-survivors", type=click.Choice(["none", "some", "all"]), default="some", show_default=True,
              help="How many surviving mutants the text report lists per model (none: the scores only).")
@mutation_format
@output_option
def mutate(paths, models, goldens, sample, seed, time_limit, show_survivors, fmt, output) -> None:
    """Seed small faults into the models and report which the goldens catch (mutation score), every surviving
    mutant with a witness that would kill it, redundant goldens and the smallest equivalent golden set."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.report.mutation import mutation_markdown, mutation_text

    models, goldens, folders = _models_and_goldens(paths, models, goldens)
    run = _api().mutate(models, goldens, sample=sample, seed=seed, time_limit=time_limit,
                        progress=_progress(), sorted_folders=folders)
    report = run.report
    if fmt == "json":
        emit(report.model_dump_json(indent=2 if _pretty(output) else None) + "\n", output)
    elif fmt == "markdown":
        emit(mutation_markdown(report), output)
    else:
        emit(mutation_text(report, {"none": 0, "some": 25, "all": None}[show_survivors]), output)
    sys.exit(EXIT_OK)


@cli.command(epilog=epilog("mbt compare --model models/ --baseline-goldens goldens/ --goldens new-cases.jsonl",
                           "mbt compare --model models/recovery.fsm --baseline-goldens goldens/ --goldens new/ "
                           "--format json"))
@click.argument("paths", nargs=-1)
@click.option("--model", "models", cls=Paths, help="Model files or folders (several after one flag, or repeated).")
@click.option("--baseline-goldens", "baseline", cls=Paths, required=True,
              help="The golden set as it is (files or folders).")
@click.option("--goldens", "goldens", cls=Paths, required=True, help="The candidate goldens to judge against it.")
@sample_option
@seed_option
@mutation_format
@output_option
def compare(paths, models, baseline, goldens, sample, seed, fmt, output) -> None:
    """Is a new golden worth adding? For each candidate: the elements it newly verifies and the mutants it newly
    kills, or "adds nothing" with the baseline goldens it duplicates at the model's level."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.paths import expand
    from mbt.report.mutation import compare_markdown, compare_text

    models, goldens, folders = _models_and_goldens(paths, models, goldens)
    report = _api().compare(models, expand(list(baseline), "--baseline-goldens"), goldens, sample=sample, seed=seed,
                            sorted_folders=folders)
    if fmt == "json":
        emit(report.model_dump_json(indent=2 if _pretty(output) else None) + "\n", output)
    elif fmt == "markdown":
        emit(compare_markdown(report), output)
    else:
        emit(compare_text(report), output)
    sys.exit(EXIT_OK)


@cli.command(epilog=epilog("mbt probes probes.jsonl",
                           "mbt probes probes.csv --candidates-from gpt-4o --format json -o probes.json"))
@click.argument("path", type=click.Path())
@click.option("--confidence", "confidence", default=0.95, show_default=True, type=click.FloatRange(0, 1, min_open=True,
              max_open=True), metavar="LEVEL", help="The intervals' confidence level.")
@click.option("--resamples", "resamples", default=None, type=click.IntRange(min=1), metavar="B",
              help="Bootstrap resamples  [default: 2000].")
@click.option("--seed", "seed", default=0, show_default=True, type=int, help="Seed of the bootstrap resamples.")
@click.option("--candidates-from", "candidates_from", default=None, metavar="GENERATOR",
              help="The generator that made the test set's candidate goldens (marked in leave-one-generator-out).")
@format_option
@output_option
def probes(path, confidence, resamples, seed, candidates_from, fmt, output) -> None:
    """Probe coverage conditioned on a generator (seed 004): from held-out probes judged covered or not by the test
    set, the coverage per source unit, pooled and stratified, with Wilson and bootstrap intervals, and
    leave-one-generator-out (docs/levels.md)."""
    report = _api().probes(path, confidence=confidence, resamples=resamples, seed=seed,
                           candidates_from=candidates_from)
    if fmt == "json":
        emit(report.model_dump_json(indent=2) + "\n", output)
    else:
        from mbt.report.probes_text import probes_text

        emit(probes_text(report), output)
    sys.exit(EXIT_OK)


@cli.command(epilog=epilog("mbt propositions --model models/refund-chat.fsm -o propositions.yaml",
                           "mbt propositions --source policy.md --extractor openai:gpt-4o-mini -o propositions.yaml"))
@click.option("--model", "models", cls=Paths, help="Models whose declared source documents are split.")
@click.option("--source", "sources", multiple=True, type=click.Path(), metavar="DOC",
              help="A source document no model declares (repeatable).")
@click.option("--extractor", "extractor", default="rules", show_default=True, metavar="rules|openai:MODEL",
              help="How units are split: mbt's rules, or an LLM on an OpenAI-compatible server (OPENAI_BASE_URL).")
@click.option("--refresh", is_flag=True, help="Split every unit again, ignoring the entries FILE holds.")
@click.option("-o", "--output", "output", required=True, type=click.Path(), metavar="FILE",
              help="The reviewable YAML file; an existing one is read first and its unchanged entries kept.")
def propositions(models, sources, extractor, refresh, output) -> None:
    """Write seed 004's atomic propositions per source unit as a reviewable file: edit it, commit it, and give it to
    `mbt coverage --levels 2 --propositions FILE`, which reads it in preference to its rules (docs/levels.md)."""
    from mbt.paths import expand

    result = _api().propositions(expand(list(models), "--model") if models else [], list(sources), output,
                                 extractor=extractor, refresh=refresh)
    emit(result.text, output)
    for failure in result.failures:
        click.echo(f"warning: {failure}", err=True)
    click.echo(f"mbt propositions: {result.propositions} proposition(s) of {result.units} unit(s) written to {output}"
               + (f" ({result.kept} entries kept unchanged)" if result.kept else ""), err=True)
    sys.exit(EXIT_OK)


@cli.group(name="import", epilog=epilog("mbt import dmn refund.dmn -o models/refund.dt",
                                        "mbt import graphwalker login.json -o models/login.fsm"))
def import_() -> None:
    """Convert models from other tools into mbt's DSL."""


@import_.command(name="dmn", epilog=epilog("mbt import dmn refund.dmn -o models/refund.dt",
                                           "mbt import dmn refund.dmn | less"))
@click.argument("path")
@output_option
@verbosity
def import_dmn(path: str, output: str | None, quiet: bool, verbose: bool) -> None:
    """Convert the decision tables of a DMN 1.1-1.5 XML file into `table` models (DSL on stdout, or -o FILE)."""
    imported = _api().import_dmn(path)
    emit(imported.text, output)
    for name in imported.skipped:
        _note(f"{path}: note: decision `{name}` holds no decision table; not imported", quiet)
    for what in imported.not_imported:
        click.echo(f"{path}: warning: decision table {what}; not imported, the others are", err=True)
    _note(f"mbt import dmn: {len(imported.tables)} table(s) from {path} (DMN {imported.version})", quiet)
    sys.exit(EXIT_OK)


@import_.command(name="graphwalker", epilog=epilog("mbt import graphwalker login.json -o models/login.fsm",
                                                   "mbt import graphwalker login.json shop.json admin.graphml "
                                                   "-o models/store.fsm"))
@click.argument("paths", nargs=-1, required=True)
@output_option
@verbosity
def import_graphwalker(paths: tuple[str, ...], output: str | None, quiet: bool, verbose: bool) -> None:
    """Convert GraphWalker JSON or yEd GraphML models into `fsm` models (DSL on stdout, or -o FILE); files given
    together that share states become one linked model; what is not translated is listed on stderr."""
    imported = _api().import_graphwalker(list(paths), output)
    emit(imported.text, output)
    for note in imported.notes:
        click.echo(note.render(), err=True)
    given = paths[0] if len(paths) == 1 else f"{len(paths)} files"
    _note(f"mbt import graphwalker: {len(imported.models)} model(s) from {given}, {len(imported.notes)} note(s)",
          quiet)
    sys.exit(EXIT_OK)


def pytest_coverage(models: list[str], goldens: list[str], gate: str | None, fail_under: str | None,
                    formats: list[str], color: bool) -> tuple[str, bool]:
    """The pytest plugin's front end (mbt.pytest_plugin): `mbt coverage` on what a test run produced. Returns the
    text report and whether the gate passed; the `formats` (NAME:PATH) are written as the CLI writes them."""
    # imported when the command runs: start-up time (only this command's stages load)
    from mbt.paths import expand
    from mbt.report.formats import FORMATS, Options, parse_targets
    from mbt.report.style import Style

    targets = parse_targets(tuple(formats), None, "coverage") if formats else []
    if any(t.path in (None, "-") for t in targets):
        raise MbtError("--mbt-report takes NAME:PATH (the terminal shows the text report)")
    run = _api().coverage_run(expand(models, "--mbt-model"), expand(goldens, "--mbt-goldens"), gate_path=gate,
                              review=any(t.format.review for t in targets),
                              diagrams=any(t.format.diagrams for t in targets),
                              cases=any(t.format.cases for t in targets), fail_under=_percent(fail_under))
    _write_reports(targets, lambda t: _coverage_body(t.format, run, Options(Style(False))))
    text = _coverage_body(FORMATS["text"], run, Options(Style(color)))
    assert isinstance(text, str)  # the text format writes text
    return text, run.report.gate is None or run.report.gate.passed


def pytest_contract_evaluator(paths: list[str], judge: str):
    """The pytest plugin's `contract_evaluator` fixture (mbt.pytest_plugin): the contracts in `paths`, else those
    among the `models` of mbt's configuration file, judged by `judge`."""
    from mbt.config import find_config
    from mbt.paths import expand

    if not paths:
        paths = list(find_config().values.get("models") or [])
    if not paths:
        raise MbtError("no contract given: pass --mbt-contract PATH, set `mbt_contracts` in pytest's ini file, or "
                       "list the contract under `models` in mbt's configuration file")
    return _api().contract_evaluator(expand(paths, "--mbt-contract"), judge)


def _check_body(fmt: Format, report: CheckReport, options: Options) -> Body:
    """A format's check report; parse_targets only lets through formats that have one."""
    if fmt.check is None:
        raise MbtError(f"--format {fmt.name} writes no check report")
    return fmt.check(report, options)


def _coverage_body(fmt: Format, run: CoverageRun, options: Options) -> Body:
    """A format's coverage report; parse_targets only lets through formats that have one."""
    if fmt.coverage is None:
        raise MbtError(f"--format {fmt.name} writes no coverage report")
    return fmt.coverage(run, options)


EXIT_INTERNAL, EXIT_INTERRUPTED = 3, 130
COMMAND_LINE: list[str] = []  # the arguments of this run, for the HTML report's header


def main(argv: list[str] | None = None) -> None:
    """Exit codes: 0 ok, 1 a gate or check failed, 2 unusable input (or an OS error on output), 3 an internal error
    (a bug in mbt: never 1, so CI can tell a crash from a failing gate), 130 interrupted."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("MBT_DEBUG", "") not in ("", "0")
    args = [a for a in args if a != "--debug"]
    COMMAND_LINE[:] = args
    try:
        cli.main(args=args, prog_name="mbt", standalone_mode=False)
    except MbtError as err:
        click.echo(err.render(), err=True)
        sys.exit(EXIT_BAD_INPUT)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("mbt: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as err:
        err.show()
        sys.exit(EXIT_BAD_INPUT)
    except SystemExit:
        raise
    except OSError as err:  # writing a report or generated files: a full disk, a read-only folder, ...
        if debug:
            traceback.print_exc()
        where = f"{err.filename}: " if err.filename else ""
        why = ("; one of its names is longer than the 255 bytes a file system allows (a long model name makes "
               "long generated file names)") if err.errno == errno.ENAMETOOLONG else ""
        click.echo(f"error: {where}{err.strerror or err}{why}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except Exception as err:  # noqa: BLE001 - the last line of defence: one line, never a traceback unasked
        if debug:
            traceback.print_exc()
        click.echo(f"mbt: internal error (mbt {__version__}): {type(err).__name__}: {err}. This is a bug in mbt: "
                   "please report it with the command line"
                   + ("" if debug else " and the traceback that `--debug` (or MBT_DEBUG=1) prints") + ".", err=True)
        sys.exit(EXIT_INTERNAL)
    sys.exit(EXIT_OK)


if __name__ == "__main__":
    main()
