"""The report formats by name, and `--format NAME[:PATH]` specs: which output goes where, checked before any work."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mbt.errors import MbtError
from mbt.files import Chunks
from mbt.report.core import Reporter, check_file_target, check_folder_target
from mbt.report.style import PLAIN, Style

if TYPE_CHECKING:  # annotations only: each format's module (and the report models it reads) loads when it is used
    from mbt.analysis.findings import CheckReport
    from mbt.measure.coverage_run import CoverageRun

# Each reporter below imports its format's module when it is called, not this module: a command loads only the
# formats it writes (`mbt --help` and a bad option none; html loads jinja2, xlsx openpyxl).


@dataclass(frozen=True)
class Format:
    name: str
    description: str
    coverage: Reporter[CoverageRun, Options] | None  # text, bytes, or a dict of files for folder formats
    check: Reporter[CheckReport, Options] | None = None
    review: bool = False  # needs source coverage and the traceability matrix
    diagrams: bool = False  # needs the models' diagrams
    folder: bool = False  # writes a folder (-o DIR), never stdout
    cases: bool = False  # needs the per-case results (mbt.measure.cases)
    binary: bool = False  # bytes for a file (-o FILE), never stdout


@dataclass
class Options:
    """Presentation options some formats read (the text report's lists)."""

    style: Style = PLAIN
    show_covering: bool = False
    uncovered_limit: int | None = 25
    show_sources: bool = False
    quiet: bool = False  # -q: the text reports without their lists
    root: str | None = None  # --root: SARIF paths relative to it (else $GITHUB_WORKSPACE, else the working folder)
    full_report: str | None = None  # where the complete report goes (named by the github format's summary)
    pretty: bool = False  # indent JSON; the CLI sets it for a terminal (files stay compact: large reports halve)


def _text_cov(run: CoverageRun, o: Options) -> str:
    from mbt.report import text  # on use (start-up time), as every format below

    out = text.coverage_text(run.report, o.style, o.show_covering, o.uncovered_limit, o.quiet)
    if o.show_sources and run.report.sources is not None:
        from mbt.report.sources_text import sources_text  # on use: only with --show-sources

        out += sources_text(run.report.sources)
    if run.report.mutation is not None:
        from mbt.report.mutation import mutation_text  # on use: only with --mutants

        out += "\n" + mutation_text(run.report.mutation, o.uncovered_limit)
    return out


def _text_check(report: CheckReport, o: Options) -> str:
    from mbt.report import text  # on use: start-up time

    return text.check_text(report, o.style, o.quiet)


def _json_coverage(run: CoverageRun, o: Options) -> bytes | Chunks:
    from mbt.report.jsonout import coverage_json_body  # on use: start-up time

    # one row per element: written without a pydantic object each
    return coverage_json_body(run.report, 2 if o.pretty else None)


def _json_check(report: CheckReport, o: Options) -> str:
    return report.model_dump_json(indent=2 if o.pretty else None) + "\n"


def _markdown(run: CoverageRun, o: Options) -> str:
    from mbt.report.markdown import coverage_markdown  # on use: start-up time

    out = coverage_markdown(run.report)
    if run.report.mutation is not None:
        from mbt.report.mutation import mutation_markdown  # on use: only with --mutants

        out += "\n" + mutation_markdown(run.report.mutation)
    return out


def _markdown_check(report: CheckReport, o: Options) -> str:
    from mbt.report.markdown import check_markdown  # on use: start-up time

    return check_markdown(report)


def _junit(run: CoverageRun, o: Options) -> str:
    from mbt.report.junit import coverage_junit  # on use: start-up time

    return coverage_junit(run.report)


def _junit_check(report: CheckReport, o: Options) -> str:
    from mbt.report.junit import check_junit  # on use: start-up time

    return check_junit(report)


def _sarif(run: CoverageRun, o: Options) -> str:
    from mbt.report.sarif import coverage_sarif  # on use: start-up time

    return coverage_sarif(run.report, o.root)


def _sarif_check(report: CheckReport, o: Options) -> str:
    from mbt.report.sarif import check_sarif  # on use: start-up time

    return check_sarif(report, o.root)


def _github(run: CoverageRun, o: Options) -> str:
    from mbt.report.github import coverage_github  # on use: start-up time

    return coverage_github(run.report, o.full_report)


def _github_check(report: CheckReport, o: Options) -> str:
    from mbt.report.github import check_github  # on use: start-up time

    return check_github(report, o.full_report)


def _codequality(run: CoverageRun, o: Options) -> str:
    from mbt.report.codequality import coverage_codequality  # on use: start-up time

    return coverage_codequality(run.report)


def _codequality_check(report: CheckReport, o: Options) -> str:
    from mbt.report.codequality import check_codequality  # on use: start-up time

    return check_codequality(report)


def _trace_md(run: CoverageRun, o: Options) -> str:
    from mbt.report.markdown import trace_markdown  # on use: start-up time

    return trace_markdown(run.report.traceability)


def _trace_csv(run: CoverageRun, o: Options) -> str:
    from mbt.report.markdown import trace_csv  # on use: start-up time

    return trace_csv(run.report.traceability)


def _xlsx(run: CoverageRun, o: Options) -> bytes:
    from mbt.report.cases import cases_xlsx  # on use: start-up time

    return cases_xlsx(run.cases)


def _cases_csv(run: CoverageRun, o: Options) -> str:
    from mbt.report.cases import cases_csv  # on use: start-up time

    return cases_csv(run.cases)


def _html(run: CoverageRun, o: Options) -> dict[str, bytes]:
    from mbt.report.html import html_files  # on use: jinja2

    return html_files(run)


FORMATS: dict[str, Format] = {f.name: f for f in [
    Format("text", "the human summary (default)", _text_cov, _text_check),
    Format("json", "the full report (docs/schemas/)", _json_coverage, _json_check),
    Format("markdown", "a compact summary for $GITHUB_STEP_SUMMARY", _markdown, _markdown_check, review=True),
    Format("junit", "JUnit XML: a testcase per element", _junit, _junit_check),
    Format("sarif", "SARIF 2.1.0 for code scanning", _sarif, _sarif_check, review=True),
    Format("github", "GitHub Actions ::error annotations", _github, _github_check),
    Format("codequality", "GitLab Code Quality JSON", _codequality, _codequality_check),
    Format("trace-md", "the traceability matrix as Markdown", _trace_md, review=True),
    Format("trace-csv", "the traceability matrix as CSV", _trace_csv, review=True),
    Format("xlsx", "one row per golden case, for Excel (--format xlsx:PATH)", _xlsx, cases=True, binary=True),
    Format("cases-csv", "one row per golden case as CSV (with a BOM for Excel)", _cases_csv, cases=True),
    Format("html", "a browsable report folder (-o DIR)", _html, review=True, diagrams=True, folder=True,
           cases=True),
]}


@dataclass(frozen=True)
class Target:
    format: Format
    path: str | None  # None or "-": stdout


# `-o PATH` without `--format`: the format its suffix names (coverage.py infers nothing; people expect it).
SUFFIX_FORMATS = {".json": "json", ".md": "markdown", ".markdown": "markdown", ".xml": "junit", ".sarif": "sarif",
                  ".csv": "trace-csv", ".txt": "text", ".xlsx": "xlsx"}


def format_for_output(output: str | None) -> str:
    """The format `-o PATH` implies when no --format is given: by suffix, else text."""
    if output in (None, "-"):
        return "text"
    return SUFFIX_FORMATS.get(Path(output).suffix.lower(), "text")


def parse_targets(specs: tuple[str, ...], output: str | None, command: str,
                  available: Mapping[str, Format] | None = None) -> list[Target]:
    """`--format NAME` or `--format NAME:PATH`, repeatable; `-o PATH` is the path of the one format given
    without a path (without any --format, the format its suffix names: cov.json is JSON). At most one output goes
    to stdout. Every problem is a bad option (exit 2) before any work. `available`: the command's own formats
    (`mbt eval`'s), else those of FORMATS that report `command`'s result."""
    inferred = format_for_output(output)
    specs = specs or (inferred if available is None or inferred in available else "text",)
    allowed = list(available.values()) if available is not None else [
        f for f in FORMATS.values() if (f.coverage if command == "coverage" else f.check) is not None]
    names = ", ".join(f.name for f in allowed)
    targets: list[Target] = []
    pathless = 0
    for spec in specs:
        name, sep, path = spec.partition(":")
        name = name.strip().lower()
        fmt = (available or FORMATS).get(name)
        if fmt is None or fmt not in allowed:
            raise MbtError(f"--format {spec}: unknown format for `mbt {command}` (use {names}, "
                           "optionally as NAME:PATH)")
        if sep and not path:
            raise MbtError(f"--format {spec}: give a path after the colon, or leave the colon out")
        if not sep:
            pathless += 1
        targets.append(Target(fmt, path if sep else None))
    if output is not None:
        if pathless != 1:
            raise MbtError("-o names the output of the one --format given without a path; "
                           + ("every --format has its own path" if pathless == 0 else
                              f"{pathless} are given without one (write them as NAME:PATH)"))
        targets = [Target(t.format, output) if t.path is None else t for t in targets]
    to_stdout = [t for t in targets if t.path in (None, "-")]
    if len(to_stdout) > 1:
        raise MbtError("only one report can go to stdout; give the others a path (--format NAME:PATH)")
    seen: set[str] = set()
    for t in targets:
        if t.format.folder and t.path in (None, "-"):
            raise MbtError(f"--format {t.format.name} writes a folder: use -o DIR or --format "
                           f"{t.format.name}:DIR")
        if t.format.binary and t.path in (None, "-"):
            raise MbtError(f"--format {t.format.name} writes a binary file: use --format {t.format.name}:PATH "
                           "or -o PATH")
        if t.path is not None and t.path != "-":
            key = str(Path(t.path).resolve())
            if key in seen:
                raise MbtError(f"two reports would be written to {t.path}")
            seen.add(key)
            if t.format.folder:
                check_folder_target(t.path)
            else:
                check_file_target(t.path, t.format.name)
    return targets
