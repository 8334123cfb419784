"""Command line: translates arguments into one call of mbt.api, formats the result, maps it to an exit code."""

from __future__ import annotations

import sys

import click

from mbt import __version__, api
from mbt.errors import MbtError
from mbt.report import text as text_report
from mbt.report.output import emit
from mbt.report.style import Style

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2

format_option = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                             show_default=True, help="Report format (JSON follows docs/schemas/).")
output_option = click.option("-o", "--output", "output", default=None, metavar="FILE",
                             help="Write the report to FILE instead of stdout.")


def _style(output: str | None) -> Style:
    return Style.for_stream(sys.stdout) if output in (None, "-") else Style(False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mbt")
def cli() -> None:
    """mbt: which business behaviour do your golden test cases check, which do they miss?"""


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@format_option
@output_option
def check(paths: tuple[str, ...], fmt: str, output: str | None) -> None:
    """Check model files or folders: syntax, references, spans against sources, reachability, guards (z3)."""
    report = api.check(list(paths))
    emit(report.model_dump_json(indent=2) + "\n" if fmt == "json" else text_report.check_text(report, _style(output)),
         output)
    sys.exit(EXIT_FAILED if report.count("error") else EXIT_OK)


@cli.command()
@click.option("--model", "models", multiple=True, required=True, help="Model file or folder (repeatable).")
@click.option("--criterion", "criteria", multiple=True, help="Only these criteria (repeatable).")
@format_option
@output_option
def elements(models: tuple[str, ...], criteria: tuple[str, ...], fmt: str, output: str | None) -> None:
    """List the coverage elements of models per criterion, with stable ids, spans, status and weights."""
    report = api.elements(list(models), list(criteria) or None)
    emit(report.model_dump_json(indent=2) + "\n" if fmt == "json" else text_report.elements_text(report), output)


@cli.command()
@click.option("--model", "models", multiple=True, required=True, help="Model file or folder (repeatable).")
@click.option("--goldens", "goldens", multiple=True, required=True,
              help="Golden cases: JSONL/YAML file or folder (repeatable).")
@click.option("--gate", "gate", default=None, metavar="FILE", help="YAML gate file: thresholds per kind.criterion.")
@click.option("--no-gate", is_flag=True, help="Only report; never fail on the gate.")
@click.option("--show-covering", is_flag=True, help="List which goldens exercise and verify each element.")
@click.option("--show-uncovered", type=click.Choice(["some", "all"]), default="some", show_default=True,
              help="How many uncovered elements the text report lists per model.")
@format_option
@output_option
def coverage(models, goldens, gate, no_gate, show_covering, show_uncovered, fmt, output) -> None:
    """Replay golden cases on models and report coverage per model and criterion; gate CI on the result."""
    if gate and no_gate:
        raise MbtError("error: --gate and --no-gate cannot be used together")
    report = api.coverage(list(models), list(goldens), gate_path=gate, use_gate=not no_gate)
    if fmt == "json":
        body = report.model_dump_json(indent=2) + "\n"
    else:
        body = text_report.coverage_text(report, _style(output), show_covering,
                                         None if show_uncovered == "all" else 25)
    emit(body, output)
    sys.exit(EXIT_FAILED if report.gate is not None and not report.gate.passed else EXIT_OK)


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="mbt", standalone_mode=False)
    except MbtError as err:
        click.echo(err.render(), err=True)
        sys.exit(EXIT_BAD_INPUT)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except click.ClickException as err:
        err.show()
        sys.exit(EXIT_BAD_INPUT)
    except SystemExit:
        raise
    sys.exit(EXIT_OK)


if __name__ == "__main__":
    main()
