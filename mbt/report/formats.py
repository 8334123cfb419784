"""The report formats by name, and `--format NAME[:PATH]` specs: which output goes where, checked before any work."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mbt.errors import MbtError
from mbt.files import Chunks
from mbt.report.core import Reporter


@dataclass(frozen=True)
class Format:
    name: str
    description: str
    coverage: Reporter | None  # (CoverageRun, Options) -> text, bytes, or a dict of files for folder formats
    check: Reporter | None = None  # (CheckReport, Options) -> text
    review: bool = False  # needs source coverage and the traceability matrix
    diagrams: bool = False  # needs the models' diagrams
    folder: bool = False  # writes a folder (-o DIR), never stdout
    cases: bool = False  # needs the per-case results (mbt.measure.cases)
    binary: bool = False  # bytes for a file (-o FILE), never stdout


@dataclass
class Options:
    """Presentation options some formats read (the text report's lists)."""

    style: object = None
    show_covering: bool = False
    uncovered_limit: int | None = 25
    show_sources: bool = False
    quiet: bool = False  # -q: the text reports without their lists
    root: str | None = None  # --root: SARIF paths relative to it (else $GITHUB_WORKSPACE, else the working folder)
    full_report: str | None = None  # where the complete report goes (named by the github format's summary)
    pretty: bool = False  # indent JSON; the CLI sets it for a terminal (files stay compact: large reports halve)


def _text_cov(run, o: Options) -> str:
    from mbt.report import text

    out = text.coverage_text(run.report, o.style, o.show_covering, o.uncovered_limit, o.quiet)
    if o.show_sources and run.report.sources is not None:
        from mbt.report.sources_text import sources_text

        out += sources_text(run.report.sources)
    if run.report.mutation is not None:
        from mbt.report.mutation import mutation_text

        out += "\n" + mutation_text(run.report.mutation, o.uncovered_limit)
    return out


def _text_check(report, o: Options) -> str:
    from mbt.report import text

    return text.check_text(report, o.style, o.quiet)


def _json(run_or_report, o: Options) -> str | bytes | Chunks:
    from mbt.measure.coverage import CoverageReport

    report = getattr(run_or_report, "report", run_or_report)
    indent = 2 if o.pretty else None
    if isinstance(report, CoverageReport):  # one row per element: written without a pydantic object each
        from mbt.report.jsonout import coverage_json_body

        return coverage_json_body(report, indent)
    return report.model_dump_json(indent=indent) + "\n"


def _markdown(run, o):
    from mbt.report.markdown import coverage_markdown

    out = coverage_markdown(run.report)
    if run.report.mutation is not None:
        from mbt.report.mutation import mutation_markdown

        out += "\n" + mutation_markdown(run.report.mutation)
    return out


def _markdown_check(report, o):
    from mbt.report.markdown import check_markdown

    return check_markdown(report)


def _junit(run, o):
    from mbt.report.junit import coverage_junit

    return coverage_junit(run.report)


def _junit_check(report, o):
    from mbt.report.junit import check_junit

    return check_junit(report)


def _sarif(run, o):
    from mbt.report.sarif import coverage_sarif

    return coverage_sarif(run.report, o.root)


def _sarif_check(report, o):
    from mbt.report.sarif import check_sarif

    return check_sarif(report, o.root)


def _github(run, o):
    from mbt.report.github import coverage_github

    return coverage_github(run.report, o.full_report)


def _github_check(report, o):
    from mbt.report.github import check_github

    return check_github(report, o.full_report)


def _codequality(run, o):
    from mbt.report.codequality import coverage_codequality

    return coverage_codequality(run.report)


def _codequality_check(report, o):
    from mbt.report.codequality import check_codequality

    return check_codequality(report)


def _trace_md(run, o):
    from mbt.report.markdown import trace_markdown

    return trace_markdown(run.report.traceability)


def _trace_csv(run, o):
    from mbt.report.markdown import trace_csv

    return trace_csv(run.report.traceability)


def _xlsx(run, o):
    from mbt.report.cases import cases_xlsx

    return cases_xlsx(run.cases)


def _cases_csv(run, o):
    from mbt.report.cases import cases_csv

    return cases_csv(run.cases)


def _html(run, o):
    from mbt.report.html import html_files

    return html_files(run)


FORMATS: dict[str, Format] = {f.name: f for f in [
    Format("text", "the human summary (default)", _text_cov, _text_check),
    Format("json", "the full report (docs/schemas/)", _json, _json),
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


def parse_targets(specs: tuple[str, ...], output: str | None, command: str) -> list[Target]:
    """`--format NAME` or `--format NAME:PATH`, repeatable; `-o PATH` is the path of the one format given
    without a path (without any --format, the format its suffix names: cov.json is JSON). At most one output goes
    to stdout. Every problem is a bad option (exit 2) before any work."""
    specs = specs or (format_for_output(output),)
    allowed = [f for f in FORMATS.values() if (f.coverage if command == "coverage" else f.check) is not None]
    names = ", ".join(f.name for f in allowed)
    targets: list[Target] = []
    pathless = 0
    for spec in specs:
        name, sep, path = spec.partition(":")
        name = name.strip().lower()
        fmt = FORMATS.get(name)
        if fmt is None or fmt not in allowed:
            raise MbtError(f"error: --format {spec}: unknown format for `mbt {command}` (use {names}, "
                           "optionally as NAME:PATH)")
        if sep and not path:
            raise MbtError(f"error: --format {spec}: give a path after the colon, or leave the colon out")
        if not sep:
            pathless += 1
        targets.append(Target(fmt, path if sep else None))
    if output is not None:
        if pathless != 1:
            raise MbtError("error: -o names the output of the one --format given without a path; "
                           + ("every --format has its own path" if pathless == 0 else
                              f"{pathless} are given without one (write them as NAME:PATH)"))
        targets = [Target(t.format, output) if t.path is None else t for t in targets]
    to_stdout = [t for t in targets if t.path in (None, "-")]
    if len(to_stdout) > 1:
        raise MbtError("error: only one report can go to stdout; give the others a path (--format NAME:PATH)")
    seen: set[str] = set()
    for t in targets:
        if t.format.folder and t.path in (None, "-"):
            raise MbtError(f"error: --format {t.format.name} writes a folder: use -o DIR or --format "
                           f"{t.format.name}:DIR")
        if t.format.binary and t.path in (None, "-"):
            raise MbtError(f"error: --format {t.format.name} writes a binary file: use --format {t.format.name}:PATH "
                           "or -o PATH")
        if t.path not in (None, "-"):
            key = str(Path(t.path).resolve())
            if key in seen:
                raise MbtError(f"error: two reports would be written to {t.path}")
            seen.add(key)
            _check_writable(t)
    return targets


def _check_writable(t: Target) -> None:
    from mbt.report.core import check_file_target, check_folder_target

    if t.format.folder:
        check_folder_target(t.path)
    else:
        check_file_target(t.path, t.format.name)
