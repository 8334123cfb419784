"""Command line: translates arguments into one call of mbt.api, formats the result, maps it to an exit code."""

from __future__ import annotations

import os
import sys
import traceback

import click

from mbt import __version__
from mbt.errors import MbtError

# mbt.api and the reporters import the whole pipeline (lark, pydantic models, networkx, z3 ...): they are imported
# when a command runs, so `mbt --help` and `mbt --version` start fast.


def _api():
    from mbt import api

    return api


def emit(text: str, path: str | None) -> None:
    from mbt.report.output import emit as write

    write(text, path)

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class Paths(click.Option):
    """A repeatable option that also takes several values after one flag: `--goldens a.jsonl b.jsonl`, which is
    what a shell glob (`--goldens goldens/*.jsonl`) turns into. It takes the words up to the next option; `-` is a
    value (standard input)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("multiple", True)
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


def _models_and_goldens(paths, models, goldens, goldens_needed: bool = True) -> tuple[list[str], list[str]]:
    """Positional paths sorted into models and goldens (mbt.paths), then --model / --goldens, globs expanded."""
    from mbt.paths import expand, split_positional

    found_models, found_goldens = split_positional(list(paths)) if paths else ([], [])
    found_models += expand(list(models), "--model")
    found_goldens += expand(list(goldens), "--goldens")
    if not found_models:
        raise MbtError("error: no model given: name model files or folders with --model PATH (or as arguments)")
    return found_models, found_goldens

format_option = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                             show_default=True, help="Report format (JSON follows docs/schemas/).")
output_option = click.option("-o", "--output", "output", default=None, metavar="FILE",
                             help="Write the report to FILE instead of stdout.")
# `--format NAME[:PATH]`, repeatable: several reports from one run (mbt.report.formats).
formats_option = click.option(
    "--format", "formats", multiple=True, metavar="NAME[:PATH]",
    help="Report format, repeatable, each optionally with its own output path: text (default), json, markdown, "
         "junit, sarif, github; for coverage also html (a folder), trace-md, trace-csv. "
         "E.g. --format junit:mbt.xml --format sarif:mbt.sarif --format text.")
multi_output_option = click.option("-o", "--output", "output", default=None, metavar="PATH",
                                   help="Output path of the one --format given without a path (html: a folder).")


def _write_reports(targets, produce) -> None:
    """Produce every report first, then write them: a failure leaves no half-written set behind."""
    from mbt.report.files import write_folder

    made = [(t, produce(t)) for t in targets]
    for t, body in made:
        if t.format.folder:
            write_folder(t.path, body)
        else:
            emit(body, t.path)


def _pretty(output: str | None) -> bool:
    """JSON is indented for a person at a terminal and compact in files and pipes (coverage.py does the same)."""
    return output in (None, "-") and sys.stdout.isatty()


def _style(output: str | None):
    from mbt.report.style import Style

    return Style.for_stream(sys.stdout) if output in (None, "-") else Style(False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mbt")
def cli() -> None:
    """mbt: which business behaviour do your golden test cases check, which do they miss?

    \b
    Exit codes: 0 ok, 1 a gate or check failed, 2 the input could not be used,
    3 an internal error (a bug in mbt), 130 interrupted.
    --debug (or MBT_DEBUG=1) prints the traceback of an internal error.
    """


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--depth", "depth", default=None, type=click.IntRange(min=1, max=10_000), metavar="N",
              help="How many steps invariant checking explores from the initial state  [default: 20].")
@formats_option
@multi_output_option
def check(paths: tuple[str, ...], depth: int | None, formats: tuple[str, ...], output: str | None) -> None:
    """Check model files or folders: syntax, references, spans against sources, reachability, guards (z3),
    invariants (explored up to --depth steps, with the shortest counterexample)."""
    from mbt.report.formats import Options, parse_targets

    targets = parse_targets(formats, output, "check")
    report = _api().check(list(paths), depth=depth)
    _write_reports(targets, lambda t: t.format.check(report, Options(style=_style(t.path), pretty=_pretty(t.path))))
    sys.exit(EXIT_FAILED if report.count("error") else EXIT_OK)


@cli.command()
@click.argument("paths", nargs=-1)
@click.option("--model", "models", cls=Paths, help="Model files or folders (several after one flag, or repeated).")
@click.option("--criterion", "criteria", multiple=True, help="Only these criteria (repeatable).")
@format_option
@output_option
def elements(paths, models: tuple[str, ...], criteria: tuple[str, ...], fmt: str, output: str | None) -> None:
    """List the coverage elements of models per criterion, with stable ids, spans, status and weights."""
    found, _ = _models_and_goldens(paths, models, ())
    report = _api().elements(found, list(criteria) or None)
    from mbt.report import text as text_report

    emit(report.model_dump_json(indent=2) + "\n" if fmt == "json" else text_report.elements_text(report), output)


@cli.command()
@click.argument("paths", nargs=-1)
@click.option("--model", "models", cls=Paths, help="Model files or folders (several after one flag, or repeated).")
@click.option("--goldens", "goldens", cls=Paths,
              help="Golden cases: JSONL/YAML/JSON files or folders, or - for standard input (several after one flag, "
                   "or repeated). Without goldens: the 0% baseline.")
@click.option("--gate", "gate", default=None, metavar="FILE", help="YAML gate file: thresholds per kind.criterion.")
@click.option("--no-gate", is_flag=True, help="Only report; never fail on the gate.")
@click.option("--show-covering", is_flag=True, help="List which goldens exercise and verify each element.")
@click.option("--show-uncovered", type=click.Choice(["some", "all"]), default="some", show_default=True,
              help="How many uncovered elements the text report lists per model.")
@click.option("--show-sources", is_flag=True,
              help="Add source-document coverage to the text report (units not modelled, unspecified parts).")
@click.option("--baseline", "baseline", default=None, metavar="FILE",
              help="Ratchet: fail only where coverage falls below this saved baseline (see --save-baseline).")
@click.option("--save-baseline", "save_baseline", default=None, metavar="FILE",
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
@formats_option
@multi_output_option
def coverage(paths, models, goldens, gate, no_gate, show_covering, show_uncovered, show_sources, baseline,
             save_baseline, jobs, engine, scheduler, no_cache, formats, output) -> None:
    """Replay golden cases on models and report coverage per model and criterion; gate CI on the result."""
    from mbt.report.formats import Options, parse_targets

    if gate and no_gate:
        raise MbtError("error: --gate and --no-gate cannot be used together")
    if baseline and no_gate:
        raise MbtError("error: --baseline is a gate rule; it cannot be used with --no-gate")
    targets = parse_targets(formats, output, "coverage")
    models, goldens = _models_and_goldens(paths, models, goldens)
    run = _api().coverage_run(models, goldens, gate_path=gate, use_gate=not no_gate,
                           baseline_path=baseline, jobs=jobs, use_cache=not no_cache, engine=engine,
                           scheduler=scheduler,
                           review=show_sources or any(t.format.review for t in targets),
                           diagrams=any(t.format.diagrams for t in targets))
    limit = None if show_uncovered == "all" else 25
    _write_reports(targets, lambda t: t.format.coverage(run, Options(_style(t.path), show_covering, limit,
                                                                     show_sources, _pretty(t.path))))
    if save_baseline:
        emit(_api().baseline_text(run.report), save_baseline)
    report = run.report
    sys.exit(EXIT_FAILED if report.gate is not None and not report.gate.passed else EXIT_OK)


@cli.command()
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
              help="With --engine dask: the local cluster's workers (default: the machine's cores), or the parts "
                   "for a --scheduler.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@output_option
def runs(models, run_paths, goldens, gate, no_gate, regressions, redact, redact_mode, engine, scheduler, jobs, fmt,
         output) -> None:
    """Judge observed runs (traces, transcripts) on models: first deviations, run metrics, usage-weighted coverage,
    the release gate, regression goldens for failing runs."""
    if gate and no_gate:
        raise MbtError("error: --gate and --no-gate cannot be used together")
    from mbt.paths import expand

    report = _api().runs(expand(list(models), "--model"), expand(list(run_paths), "--runs"),
                         expand(list(goldens), "--goldens") if goldens else None,
                         gate_path=gate, use_gate=not no_gate, regressions=regressions,
                         redact=list(redact) if redact else None, redact_mode=redact_mode, engine=engine,
                         scheduler=scheduler, jobs=jobs)
    if fmt == "json":
        emit(report.model_dump_json(indent=2) + "\n", output)
    else:
        from mbt.report.runs_text import runs_text

        emit(runs_text(report), output)
    sys.exit(EXIT_FAILED if report.gate is not None and not report.gate.passed else EXIT_OK)


@cli.command()
@click.option("--model", "models", cls=Paths, required=True, help="Model files or folders.")
@click.option("--goldens", "goldens", cls=Paths, help="Golden cases to paint coverage with.")
@click.option("-o", "--output", "output", required=True, metavar="FILE",
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
@click.option("--gate", "gate", default=None, metavar="FILE", help="Gate file whose waivers the diagram shows.")
def render(models, goldens, output, name, focus, depth, path, clusters, gate) -> None:
    """Draw a model for review (a state machine as a diagram), with coverage painted on it when goldens are given."""
    from mbt.report.files import write_bytes

    if depth != 1 and focus is None:
        raise MbtError("error: --depth needs --focus STATE")
    models, goldens = _models_and_goldens((), models, goldens)
    rendered = _api().render(models, output, goldens or None, name=name, focus=focus, depth=depth,
                          path=path, clusters=clusters, gate_path=gate)
    write_bytes(output, rendered.data)
    click.echo(f"mbt render: wrote {output} ({rendered.model})", err=True)
    sys.exit(EXIT_OK)


@cli.command()
@click.option("--model", "models", cls=Paths, required=True, help="Model files or folders.")
@click.option("--goldens", "goldens", cls=Paths,
              help="Golden cases whose gaps to fill (repeatable; none: every element is a gap).")
@click.option("--out", "out", required=True, metavar="DIR", help="Folder to write into (nothing is written outside).")
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
@format_option
def generate(models, goldens, out, criteria, full, max_depth, max_paths, preconditions, force, fmt) -> None:
    """Write test skeletons (pytest + golden-case stubs) for the coverage gaps, or a full suite with --all."""
    from mbt.report.generate_text import generate_text

    suite = None
    if full:
        if len(criteria) > 1:
            raise MbtError("error: --all takes one --criterion (transition or transition-pair)")
        suite = criteria[0] if criteria else "transition"
    models, goldens = _models_and_goldens((), models, goldens)
    report = _api().generate(models, goldens, out, criteria=None if full else list(criteria) or None,
                          suite=suite, max_depth=max_depth, max_paths=max_paths,
                          preconditions=[_mapping(p) for p in preconditions], force=force)
    emit(report.model_dump_json(indent=2) + "\n" if fmt == "json" else generate_text(report, _style(None)), None)
    for kept in report.kept_edited:
        click.echo(f"{out}/{kept.path}: edited since mbt generated it, so it was kept; the new version is "
                   f"{out}/{kept.beside} (merge it, or rerun with --force)", err=True)
    sys.exit(EXIT_FAILED if report.kept_edited else EXIT_OK)


def _mapping(text: str) -> dict:
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise MbtError(f"error: --precondition {text!r} is not valid YAML/JSON: {err}") from None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise MbtError(f"error: --precondition {text!r} must be a mapping such as '{{state: idle, retries: 0}}'")
    return value


@cli.group(name="import")
def import_() -> None:
    """Convert models from other tools into mbt's DSL."""


@import_.command(name="dmn")
@click.argument("path")
@output_option
def import_dmn(path: str, output: str | None) -> None:
    """Convert the decision tables of a DMN 1.1-1.5 XML file into `table` models (DSL on stdout, or -o FILE)."""
    imported = _api().import_dmn(path)
    emit(imported.text, output)
    for name in imported.skipped:
        click.echo(f"{path}: note: decision `{name}` holds no decision table; not imported", err=True)
    for what in imported.not_imported:
        click.echo(f"{path}: warning: decision table {what}; not imported, the others are", err=True)
    click.echo(f"mbt import dmn: {len(imported.tables)} table(s) from {path} (DMN {imported.version})", err=True)
    sys.exit(EXIT_OK)


@import_.command(name="graphwalker")
@click.argument("path")
@output_option
def import_graphwalker(path: str, output: str | None) -> None:
    """Convert GraphWalker JSON models into `fsm` models (DSL on stdout, or -o FILE); what is not translated is
    listed on stderr."""
    imported = _api().import_graphwalker(path, output)
    emit(imported.text, output)
    for note in imported.notes:
        click.echo(note.render(path), err=True)
    click.echo(f"mbt import graphwalker: {len(imported.models)} model(s) from {path}, "
               f"{len(imported.notes)} note(s)", err=True)
    sys.exit(EXIT_OK)


EXIT_INTERNAL, EXIT_INTERRUPTED = 3, 130


def main(argv: list[str] | None = None) -> None:
    """Exit codes: 0 ok, 1 a gate or check failed, 2 unusable input (or an OS error on output), 3 an internal error
    (a bug in mbt: never 1, so CI can tell a crash from a failing gate), 130 interrupted."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("MBT_DEBUG", "") not in ("", "0")
    args = [a for a in args if a != "--debug"]
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
        click.echo(f"error: {where}{err.strerror or err}", err=True)
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
