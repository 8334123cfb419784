"""Paths as people type them: quoted shell globs expanded, and positional paths told apart into models and goldens
(in a folder given so, the files that are not golden cases left out, each with why)."""

from __future__ import annotations

import glob
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mbt.errors import MbtError
from mbt.kind import model_suffixes
from mbt.model.common import ModelBase
from mbt.sources import source_path

GLOB_CHARS = frozenset("*?[")
# Model files that are not DSL files: read with --model (positional .json files are goldens, see split_positional).
IMPORTED_MODEL_SUFFIXES = (".dmn",)


def expand(paths: list[str], what: str) -> list[str]:
    """Each path as given, or, when it is a glob the shell did not expand (quoted, or on Windows), the files it
    matches, sorted (`**` spans folders). A glob matching nothing is a bad option."""
    out: list[str] = []
    for raw in paths:
        if raw != "-" and GLOB_CHARS & set(raw) and not Path(raw).exists():
            found = sorted(glob.glob(raw, recursive=True))
            if not found:
                raise MbtError(f"{what} {raw}: no file matches this pattern")
            out.extend(found)
        else:
            out.append(raw)
    return out


@dataclass
class Positional:
    """Positional paths told apart: model paths, golden paths, and the folders among the golden paths, whose files
    are sorted (`left_out`) before they are read as goldens."""

    models: list[str] = field(default_factory=list)
    goldens: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)


def split_positional(paths: list[str]) -> Positional:
    """`mbt coverage models/ goldens/ x.fsm g.jsonl`: model files go to the models, golden files to the goldens, a
    folder to whichever it holds (both when it holds both: a folder of examples with their goldens)."""
    from mbt.goldens.loader import GOLDEN_SUFFIXES  # on use: start-up time (`mbt runs` without goldens reads none)
    from mbt.parsing.loader import is_own_format_model  # on use: start-up time

    found = Positional()
    models, goldens = found.models, found.goldens
    model_kinds = (*model_suffixes(), *IMPORTED_MODEL_SUFFIXES)
    for raw in expand(paths, "path"):
        p = Path(raw)
        suffix = p.suffix.lower()
        if p.is_file() and is_own_format_model(p):  # a model in a format of its own (a contract's YAML)
            models.append(raw)
        elif raw == "-" or (p.is_file() and suffix in GOLDEN_SUFFIXES):
            goldens.append(raw)
        elif p.is_file() and suffix in model_kinds:
            models.append(raw)
        elif p.is_dir():
            files = [q for q in p.rglob("*") if q.is_file()]
            own = {q for q in files if is_own_format_model(q)}
            has_models = bool(own) or any(q.suffix.lower() in model_kinds for q in files)
            has_goldens = any(q.suffix.lower() in GOLDEN_SUFFIXES and q not in own for q in files)
            if has_models:
                models.append(raw)
            if has_goldens or not has_models:
                goldens.append(raw)
                found.folders.append(raw)
        elif not p.exists():
            raise MbtError(f"{raw}: no such file or folder")
        else:
            raise MbtError(f"{raw}: neither a model file ({', '.join(model_kinds)}) nor a golden file "
                           f"({', '.join(GOLDEN_SUFFIXES)})")
    return found


# In a folder given as a positional path, these subfolders hold no golden cases by the layout mbt's examples use.
NOT_GOLDEN_FOLDERS = {"gates": "in a `gates/` folder: gate files, for --gate",
                      "runs": "in a `runs/` folder: observed runs, for `mbt runs --runs`",
                      "answers": "in an `answers/` folder: expected and recorded answers, for `mbt eval`"}
GATE_FILE = "a gate file, for --gate"
OWN_FORMAT_MODEL = "a model in a format of its own (a contract), read as a model"
TRACE_FILE = "an OpenTelemetry trace, for `mbt runs --runs`"
RAG_TRACE_FILE = "a RAG trace (retrieved documents and claims), for `mbt runs --runs`"
SNIFF_GATE_BYTES = 1024 * 1024  # gate files are small: a larger YAML file is not opened to be told apart
SNIFF_JSON_BYTES = 64 * 1024 * 1024  # a .json file larger than this is read as goldens without a look


def left_out(folders: Iterable[str], models: list[ModelBase]) -> dict[str, str]:
    """The files of `folders` (given as positional paths, where mbt decides what each file is) that are not golden
    cases, each with why, by resolved path: those under a `gates/` or `runs/` subfolder, the source documents a
    loaded model cites, models of a format of their own (a contract's YAML) and files whose content is a gate file or
    an OpenTelemetry trace. A file named on the command
    line, or a folder given with --goldens, is read as goldens whatever it holds (docs/user-guide.md)."""
    from mbt.goldens.loader import GOLDEN_SUFFIXES  # on use: start-up time (`mbt runs` without goldens reads none)
    from mbt.parsing.loader import is_own_format_model  # on use: start-up time

    cited: dict[str, str] = {}
    for model in models:
        for decl in model.sources.values():
            path = source_path(model.file, decl).resolve()
            if path != Path(model.file).resolve():  # a contract cites its own file: no news about that file
                cited.setdefault(str(path), f"a source document of model `{model.name}`")
    out: dict[str, str] = {}
    for folder in folders:
        root = Path(folder)
        for path in sorted(root.rglob("*")):
            inside = path.relative_to(root).parts
            if not path.is_file() or path.suffix.lower() not in GOLDEN_SUFFIXES or any(
                    part.startswith(".") for part in inside):
                continue
            key = str(path.resolve())
            folder_rule = next((NOT_GOLDEN_FOLDERS[part] for part in inside[:-1] if part in NOT_GOLDEN_FOLDERS), None)
            reason = folder_rule or cited.get(key) or (OWN_FORMAT_MODEL if is_own_format_model(path) else None) \
                or _content(path)
            if reason is not None:
                out[key] = reason
    return out


def _content(path: Path) -> str | None:
    """GATE_FILE, TRACE_FILE or RAG_TRACE_FILE when the file's content is one (looked at within the sizes above),
    else None."""
    import yaml  # on use: start-up time

    # Floors above this one, needed only to tell a file by its content.
    from mbt.measure.gate import is_gate_file
    from mbt.runs.reader import run_reader_for

    suffix, size = path.suffix.lower(), path.stat().st_size
    try:
        if suffix in (".yaml", ".yml") and size <= SNIFF_GATE_BYTES:
            return GATE_FILE if is_gate_file(yaml.safe_load(path.read_text(encoding="utf-8"))) else None
        if suffix == ".json" and size <= SNIFF_JSON_BYTES:
            value = json.loads(path.read_text(encoding="utf-8"))
        elif suffix == ".jsonl":
            with path.open(encoding="utf-8") as lines:
                first = next((line for line in lines if line.strip()), "")
            value = json.loads(first) if first else None
        else:
            return None
    except (OSError, ValueError, RecursionError, yaml.YAMLError):
        return None  # unreadable as such: it is read as goldens, and any problem is reported there
    if suffix == ".json" and is_gate_file(value):
        return GATE_FILE
    reader = run_reader_for(value)
    # Only traces are told by their content: a transcript has the shape of a golden conversation too.
    return {"otlp": TRACE_FILE, "rag": RAG_TRACE_FILE}.get(reader.name) if reader is not None else None
