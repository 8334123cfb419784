"""The result viewer (`mbt results site DIR`): a static site over the store, with seed 001's screens — the list of
result sets (status, time, run type, executor; searched and filtered), per set its overview and the detail list
(filtered by single or multi-turn and by result, searched in questions and actual answers) with what its LLM judges
cost, and per case the
explanation per criterion, the questions with expected and actual answers, and the recorded session as its history.

A folder of files, read offline from disk or any web server, nothing to run and nothing listening: `index.html` lists
the sets; `sets/SLUG/index.html` is a set's overview and case list, `sets/SLUG/case.html?i=N` one case. The pages
are HTML with one script and one style sheet (`assets/`, no network). A set's cases are written in chunks that the
page loads one after another (`rows/NNNNN.js`: ROW_CHUNK cases each, what the list shows and filters on;
`search/NNNNN.js`: the same cases' folded questions and answers, read once a search is typed; `cases/NNNNN.js`:
DETAIL_CHUNK cases each, what a case's page shows), as scripts, because a page opened from disk may load scripts but
not fetch files. The list shows its first page from the first chunk, and filters and searches the cases loaded so
far while the rest load.

Every value from the store is escaped: HTML through Jinja's autoescaping; the chunks and the page data are JSON (with
`<`, `>` and `&` escaped where a page holds them), and the script puts texts on the page as text nodes, never as
markup. A set's folder is kept as it was when the stamp it was written from is unchanged (mbt.store.pages): only
new and changed sets are written again. Formatting only: every figure comes from the store.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shlex
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from mbt import __version__
from mbt.files import Files
from mbt.report.llm_cost import cost_text, limits_text
from mbt.store.model import Rate
from mbt.store.pages import ViewerCase, ViewerSet
from mbt.store.records import now

SITE_VERSION = "2"  # the layout of a set's files: a change rewrites every set
ROW_CHUNK = 2000  # cases per chunk of the list
DETAIL_CHUNK = 100  # cases per chunk of case pages
SHOWN = 300  # characters of a question or answer in the list (a case's page has them whole)
VERDICT_CODES = {"pass": "p", "fail": "f", "not_judged": "n", "error": "e"}
VERDICT_WORDS = {"pass": "pass", "fail": "fail", "not_judged": "not judged", "error": "error"}


def slug(name: str) -> str:
    """A folder name for a set: its name's letters and digits, and a hash of the whole name (names are unique)."""
    base = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()[:40] or "set"
    return f"{base}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"


def page_json(value: Any) -> str:
    """JSON to put inside a page's <script> element: `<`, `>` and `&` escaped, so no text ends the element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


@functools.cache
def fold_table() -> dict[str, str]:
    """What Python's case folding does beyond lower-casing (ß -> ss, final ς -> σ, ...), by lower-cased character:
    the script folds a search as `mbt results show --search` does (NFC, lower case, then this table)."""
    table = {}
    for start in range(0, sys.maxunicode + 1, 256):
        block = "".join(map(chr, range(start, start + 256))) if not 0xD800 <= start <= 0xDFFF else ""
        if block.lower() == block.casefold():  # most blocks: nothing to look at one by one
            continue
        for char in block:
            lower, folded = char.lower(), char.casefold()
            if lower != folded and len(lower) == 1:
                table[lower] = folded  # as mbt.store.records.fold: NFC first, then folded (not normalised again)
    return dict(sorted(table.items()))


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("mbt.report.site", "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["pct"] = lambda v: "n/a" if v is None else f"{v:.1f}%"
    env.filters["verdict"] = lambda v: VERDICT_WORDS.get(v, v)
    env.filters["share"] = lambda v: "n/a" if v is None else f"{v * 100:.1f}%"  # a fraction (a cache hit rate)
    env.filters["cost"] = cost_text  # dollars, or `not measured` (never $0)
    env.filters["limits"] = limits_text  # a budget's limits as the command line gives them
    return env


def _asset(name: str) -> bytes:
    return resources.files("mbt.report.site").joinpath("static", name).read_bytes()


def _short(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= SHOWN else text[:SHOWN - 1] + "…"


def duration(start: str, end: str | None) -> str:
    """`1 h 02 min`, `3 min 05 s`, `12 s` between two of the store's UTC times; empty without an end."""
    import datetime as dt

    if not end:
        return ""
    try:
        seconds = int((dt.datetime.fromisoformat(end.replace("Z", "+00:00"))
                       - dt.datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds())
    except ValueError:
        return ""
    hours, rest = divmod(max(seconds, 0), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


def _row(case: ViewerCase, criteria: list[str]) -> list[Any]:
    """A case in the list: [seq, key, multi-turn (0/1), overall, in error (0/1), question, answer, the verdict of
    each criterion as a letter (p, f, n, e; - none)]. Its search text goes to the search chunks, read only when a
    search is typed."""
    r = case.row
    erred = r.error is not None or r.overall == "error"  # as `--result ok` (run without error) reads it
    codes = "".join(VERDICT_CODES.get(r.criteria.get(c, ""), "-") for c in criteria)
    return [r.seq, r.key, int(r.kind == "multi"), r.overall, int(erred), _short(r.question), _short(r.answer), codes]


def _fact(label: str, value: Any) -> list[str] | None:
    return None if value in (None, "", [], {}) else [label, str(value)]


def _detail(case: ViewerCase) -> dict[str, Any]:
    """A case's page: the explanation per criterion, the questions with expected and actual answers (eval: the
    goldens' turns; runs: the session's prompts and answers), the history (the session's turns) and the facts."""
    r, doc = case.row, case.doc
    context: dict[str, Any] = doc.get("context") or {}
    turns = doc.get("turns") if isinstance(doc.get("turns"), list) and doc.get("turns") and \
        isinstance(doc["turns"][0], dict) and "question" in doc["turns"][0] else None
    history = doc.get("transcript") if isinstance(doc.get("transcript"), list) else None
    if turns is not None:
        qa = [[str(t.get("question") or ""), [str(e) for e in t.get("expected") or []],
               None if t.get("actual") is None else str(t.get("actual")), bool(t.get("judged", True))] for t in turns]
    else:
        qa = [[str(t.get("prompt") or ""), [], None if t.get("answer") is None else str(t.get("answer")), True]
              for t in history or []]
    overall: dict[str, Any] = doc["overall"] if isinstance(doc.get("overall"), dict) else {}
    deviation = doc.get("deviation") if isinstance(doc.get("deviation"), dict) else None
    model = doc.get("model") if isinstance(doc.get("model"), dict) else None
    tokens = [context.get("input_tokens"), context.get("output_tokens")]
    facts = [
        _fact("Where", r.where), _fact("Case id", r.id), _fact("Answered by the run", doc.get("run")),
        _fact("Run matched by", doc.get("matched_by")),
        _fact("Agent version", r.agent_version or context.get("service_version")),
        _fact("Model", context.get("response_model") or context.get("request_model")),
        _fact("Prompt version", context.get("prompt_version")),
        _fact("Wall time", f"{context['wall_ms']:.0f} ms" if isinstance(context.get("wall_ms"), (int, float)) else None),
        _fact("Tokens in / out", " / ".join("?" if t is None else str(t) for t in tokens) if any(
            t is not None for t in tokens) else None),
        _fact("First deviation", (f"{deviation.get('type')} at {deviation.get('where')}: {deviation.get('message')}"
                                  if deviation else r.first_deviation)),
        _fact("On the model", f"{model.get('verdict')}: {model.get('reason')}" if model else None),
        _fact("must_not said", ", ".join(doc.get("must_not_violated") or [])),
        _fact("Not judged", "; ".join(doc.get("not_judged") or [])),
        _fact("Agent error", doc.get("agent_error")), _fact("Invalid", doc.get("invalid")), _fact("Error", r.error)]
    return {"seq": r.seq, "key": r.key, "kind": r.kind, "turns": r.turns, "overall": r.overall,
            "reason": overall.get("reason") or "",
            "verdicts": [[v.criterion, v.verdict, v.reason, v.judge] for v in case.verdicts],
            "qa": qa, "history": history, "facts": [f for f in facts if f is not None]}


def _chunk_file(callback: str, index: int, items: list[Any]) -> bytes:
    """A chunk as a script calling `callback(index, items)`: JSON, which is JavaScript (the two line separators
    escaped for older engines)."""
    body = json.dumps(items, ensure_ascii=False, separators=(",", ":"))
    body = body.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"{callback}({index},{body});\n".encode()


@dataclass
class Site:
    """The site's files (`files()`, made while they are written) and, once written, what was done per set."""

    sets: Sequence[ViewerSet]
    target: Path
    written_at: str = field(default_factory=now)  # UTC; SOURCE_DATE_EPOCH honoured
    written: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)

    def files(self) -> Files:
        return Files(self._files())

    def _files(self) -> Iterator[tuple[str, bytes | Path]]:
        env = _env()
        common = {"version": __version__, "written_at": self.written_at}
        yield "assets/viewer.css", _asset("viewer.css")
        yield "assets/viewer.js", _asset("viewer.js")
        yield "assets/fold.js", f"window.MBT_FOLD={page_json(fold_table())};\n".encode()
        entries: list[dict[str, Any]] = [{"info": s.info, "folder": f"sets/{slug(s.info.name)}",
                                          "duration": duration(s.info.started_at, s.info.ended_at)}
                                         for s in self.sets]
        types = sorted({s.info.run_type for s in self.sets} | {"eval", "runs"})
        yield "index.html", env.get_template("sets.html").render(
            **common, root="", entries=entries, types=types).encode("utf-8")
        for s, entry in zip(self.sets, entries):
            folder = str(entry["folder"])
            stamp = f"mbt site {SITE_VERSION}, mbt {__version__}, set {s.stamp}\n"
            old = self.target / folder
            if (old / "stamp.txt").is_file() and (old / "stamp.txt").read_text(encoding="utf-8") == stamp:
                self.reused.append(s.info.name)
                for path in sorted(p for p in old.rglob("*") if p.is_file()):
                    yield f"{folder}/{path.relative_to(old).as_posix()}", path
                continue
            yield from self._set_files(env, common, s, entry)
            yield f"{folder}/stamp.txt", stamp.encode("utf-8")
            self.written.append(s.info.name)

    def _set_files(self, env: jinja2.Environment, common: dict[str, Any], s: ViewerSet,
                   entry: dict[str, Any]) -> Iterator[tuple[str, bytes]]:
        folder = entry["folder"]
        criteria = [rate.key for rate in s.overview.criteria]
        rows: list[list[Any]] = []
        texts: list[str] = []
        details: list[dict[str, Any]] = []
        row_chunks = detail_chunks = count = 0
        for case in s.cases():
            rows.append(_row(case, criteria))
            texts.append(case.search)
            details.append(_detail(case))
            count += 1
            if len(rows) == ROW_CHUNK:
                yield f"{folder}/rows/{row_chunks:05d}.js", _chunk_file("mbtRows", row_chunks, rows)
                yield f"{folder}/search/{row_chunks:05d}.js", _chunk_file("mbtSearch", row_chunks, texts)
                rows, texts, row_chunks = [], [], row_chunks + 1
            if len(details) == DETAIL_CHUNK:
                yield f"{folder}/cases/{detail_chunks:05d}.js", _chunk_file("mbtCases", detail_chunks, details)
                details, detail_chunks = [], detail_chunks + 1
        if rows:
            yield f"{folder}/rows/{row_chunks:05d}.js", _chunk_file("mbtRows", row_chunks, rows)
            yield f"{folder}/search/{row_chunks:05d}.js", _chunk_file("mbtSearch", row_chunks, texts)
            row_chunks += 1
        if details:
            yield f"{folder}/cases/{detail_chunks:05d}.js", _chunk_file("mbtCases", detail_chunks, details)
            detail_chunks += 1
        data = {"set": s.info.name, "cases": count, "rowChunk": ROW_CHUNK, "rowChunks": row_chunks,
                "detailChunk": DETAIL_CHUNK, "criteria": criteria}
        rates: list[Rate] = [s.overview.overall, *s.overview.criteria]
        values = {**common, "root": "../../", "s": s.info, "o": s.overview, "rates": rates, "entry": entry,
                  "data": page_json(data), "criteria": criteria, "judge": _judge_text(s.info.judge),
                  "threshold": s.info.judge.get("threshold"), "running": s.info.writer, "usage": s.usage,
                  "quoted": shlex.quote(s.info.name)}
        yield f"{folder}/index.html", env.get_template("set.html").render(**values).encode("utf-8")
        yield f"{folder}/case.html", env.get_template("case.html").render(**values).encode("utf-8")


def _judge_text(judge: dict[str, Any]) -> str:
    """The judge configuration as the overview shows it: the judge (and each criterion's own), or a runs set's
    models and gate file."""
    if judge.get("judge"):
        own = {k: v for k, v in (judge.get("judges") or {}).items() if v != judge["judge"]}
        return str(judge["judge"]) + "".join(f"; {k}: {v}" for k, v in own.items())
    models = ", ".join(judge.get("models") or [])
    return models + (f"; gate {judge['gate']}" if judge.get("gate") else "")
