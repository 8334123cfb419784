"""Seed 000's contract YAML read as a model of kind `contract` (the contract kind's file format, mbt.kind.FileFormat).

The file is read unchanged: a YAML mapping with `id` (the contract's name, which golden cases give as `contract:`),
and any of `severity`, `goal`, `intent_if_exposed`, `must_have`, `must_not`, `grounding.allowed_sources`,
`recovery.<situation>` and `soft_rubric` (docs/contracts.md). YAML is composed into nodes, not loaded, so every item
keeps where its leaf is written (line and column, from the node's start mark); each item cites that leaf as its span
(the contract file is its own source document, so `mbt check` verifies every span against the file itself).

Bad input is one located problem per fault, `file:line:col`, never a traceback: a file that is not YAML, not one
document or not a mapping; a missing or non-text `id`; a list item or value that is not text, or is empty; a key
given twice; an unknown `severity`; and an unknown key. An unknown key is an error, not a note: a misspelt `must_not`
would otherwise drop forbidden behaviour without a word. Keys starting with `x-` are the author's own (an owner, a
review date…) and are left alone, as OpenAPI does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mbt.errors import LocatedError, Problem, did_you_mean, problem_at
from mbt.model.common import Location, Severity, SourceDecl, Span, Status
from mbt.model.contract import ContractItem, ContractModel
from mbt.parsing.loader import ModelFile

# The contract's keys (seed 000's contracts/password-reset.yaml); `grounding` holds `allowed_sources`.
KEYS = ("id", "severity", "goal", "intent_if_exposed", "must_have", "must_not", "grounding", "recovery", "soft_rubric")
GROUNDING_KEYS = ("allowed_sources",)
# What makes a YAML mapping a contract when it is met in a folder: an `id` and one of these.
CONTRACT_MARKS = ("must_have", "must_not", "grounding", "recovery", "intent_if_exposed")
# Keys of golden cases, suites and gate files: a mapping holding one is never taken for a contract.
NOT_CONTRACT_KEYS = frozenset(("turns", "cases", "input", "inputs", "request", "table", "policy", "decisions",
                               "expect", "assertions", "final_assertions", "precondition", "contract", "model",
                               "messages", "release_gate", "rules", "thresholds"))


class _Reader:
    """One contract file's nodes read into a ContractModel, collecting every problem before raising them."""

    def __init__(self, path: str, text: str):
        self.path, self.text = path, text
        self.problems: list[Problem] = []
        self.source = Path(path).name  # the contract cites itself: its one source is its own file

    def problem(self, node: yaml.Node, message: str, hint: str | None = None) -> None:
        mark = node.start_mark
        self.problems.append(problem_at(self.path, self.text, mark.line + 1, mark.column + 1, message, hint))

    def loc(self, node: yaml.Node) -> Location:
        return Location(file=self.path, line=node.start_mark.line + 1, column=node.start_mark.column + 1)

    def span(self, node: yaml.ScalarNode) -> Span:
        """The leaf's lines, and its text as the quote when the file holds that text as written (a quoted scalar
        with escapes, `"caf\\u00e9"`, is cited by its lines alone)."""
        start, end = node.start_mark, node.end_mark
        last = end.line + 1 if end.column > 0 else end.line
        written = self.text[start.index:end.index]
        if node.style in ("'", '"'):
            written = written[1:-1]
        quote = node.value if " ".join(written.split()) == " ".join(node.value.split()) else None
        return Span(source=self.source, line_start=start.line + 1, line_end=max(last, start.line + 1), quote=quote,
                    loc=self.loc(node))

    def text_of(self, node: yaml.Node, what: str) -> str | None:
        """The text of a scalar leaf, or None with a problem (a list, a mapping, a number, an empty text)."""
        if not isinstance(node, yaml.ScalarNode) or node.tag != "tag:yaml.org,2002:str":
            shown = _what(node)
            self.problem(node, f"{what} must be text, not {shown}",
                         "quote it if it is meant as text" if isinstance(node, yaml.ScalarNode) else None)
            return None
        if not node.value.strip():
            self.problem(node, f"{what} is empty: an item must say something")
            return None
        return node.value

    def item(self, node: yaml.Node, key: str) -> ContractItem | None:
        text = self.text_of(node, f"`{key}`")
        if text is None:
            return None
        return ContractItem(key=key, text=text, loc=self.loc(node), span=self.span(node),  # type: ignore[arg-type]
                            status=Status.stated)

    def items(self, node: yaml.Node, key: str) -> list[ContractItem]:
        """A list of text items (`must_have`, ...); each item's key is `key[i]`."""
        if not isinstance(node, yaml.SequenceNode):
            self.problem(node, f"`{key}` must be a list of texts, not {_what(node)}")
            return []
        found = [self.item(child, f"{key}[{i}]") for i, child in enumerate(node.value)]
        return [item for item in found if item is not None]

    def mapping(self, node: yaml.Node, what: str) -> list[tuple[yaml.ScalarNode, yaml.Node]] | None:
        """A mapping's (key node, value node) pairs with text keys given once, or None with a problem."""
        if not isinstance(node, yaml.MappingNode):
            self.problem(node, f"{what} must be a mapping, not {_what(node)}")
            return None
        pairs: list[tuple[yaml.ScalarNode, yaml.Node]] = []
        seen: dict[str, int] = {}
        for key_node, value in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                self.problem(key_node, f"{what}: a key must be a plain name, not {_what(key_node)}")
                continue
            name = key_node.value
            if name in seen:
                self.problem(key_node, f"{what}: `{name}` is given twice (first at line {seen[name]}); which one "
                                       "counts would be a guess")
                continue
            seen[name] = key_node.start_mark.line + 1
            pairs.append((key_node, value))
        return pairs

    def unknown(self, key_node: yaml.ScalarNode, where: str, known: tuple[str, ...]) -> bool:
        """Whether the key is unknown here (a problem then); `x-` keys are the author's own and never unknown."""
        name = key_node.value
        if name in known or name.startswith("x-"):
            return False
        self.problem(key_node, f"{where}: unknown key `{name}`{did_you_mean(name, known)}",
                     f"a contract has {', '.join(known)}; keys starting with `x-` are left alone")
        return True

    def read(self, root: yaml.Node) -> ContractModel | None:
        pairs = self.mapping(root, "a contract")
        if pairs is None:
            return None
        fields: dict[str, Any] = {}
        name_node: yaml.Node | None = None
        for key_node, value in pairs:
            key = key_node.value
            if self.unknown(key_node, "the contract", KEYS):
                continue
            if key == "id":
                name_node = value
                fields["name"] = self.text_of(value, "`id`")
            elif key == "severity":
                fields["severity"] = self.severity(value)
                fields["severity_item"] = self.item(value, "severity") if fields["severity"] is not None else None
            elif key in ("goal", "intent_if_exposed"):
                fields[key] = self.item(value, key)
            elif key in ("must_have", "must_not", "soft_rubric"):
                fields[key] = self.items(value, key)
            elif key == "grounding":
                fields["allowed_sources"] = self.grounding(value)
            elif key == "recovery":
                fields["recovery"] = self.recovery(value)
        if name_node is None:
            self.problem(root, "the contract has no `id` (golden cases name a contract by it: `contract: ID`)")
        if self.problems or not fields.get("name"):
            return None
        severity = fields.pop("severity", None)
        name = fields.pop("name")
        return ContractModel(
            name=name, file=self.path, loc=self.loc(name_node) if name_node is not None else self.loc(root),
            span=self.span(name_node) if isinstance(name_node, yaml.ScalarNode) else None, status=Status.stated,
            severity=severity, severity_text=severity.value if severity is not None else None,
            sources={self.source: SourceDecl(name=self.source, path=self.source, loc=self.loc(root))},
            contracts=[name], **fields)  # the contract is its own: cases naming it are its cases

    def severity(self, node: yaml.Node) -> Severity | None:
        text = self.text_of(node, "`severity`")
        if text is None:
            return None
        known = [s.value for s in Severity]
        if text.strip().lower() not in known:
            self.problem(node, f"unknown severity `{text}`{did_you_mean(text.strip().lower(), known)}",
                         f"one of {', '.join(known)}")
            return None
        return Severity(text.strip().lower())

    def grounding(self, node: yaml.Node) -> list[ContractItem]:
        pairs = self.mapping(node, "`grounding`")
        found: list[ContractItem] = []
        for key_node, value in pairs or []:
            if not self.unknown(key_node, "`grounding`", GROUNDING_KEYS):
                found += self.items(value, "grounding.allowed_sources")
        return found

    def recovery(self, node: yaml.Node) -> list[ContractItem]:
        """`recovery.<situation>: what the agent does then`, a text per situation."""
        pairs = self.mapping(node, "`recovery`")
        found = [self.item(value, f"recovery.{key_node.value}") for key_node, value in pairs or []]
        return [item for item in found if item is not None]


def _what(node: yaml.Node) -> str:
    """What a node holds, in a message's words."""
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    tag = node.tag.rsplit(":", 1)[-1]
    return {"int": "a number", "float": "a number", "bool": "true/false", "null": "nothing (null)",
            "str": "text"}.get(tag, tag)


def compose(path: str, text: str) -> yaml.Node:
    """The file's one YAML document as nodes; a located problem for YAML that cannot be read, several documents or
    none."""
    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        raise LocatedError([problem_at(path, text, line, column, f"not valid YAML: {err.problem or err}")]) from None
    except yaml.YAMLError as err:
        raise LocatedError([Problem(path, 1, 1, f"not valid YAML: {err}")]) from None
    except RecursionError:  # PyYAML composes nested collections recursively; no contract nests more than twice
        raise LocatedError([Problem(path, 1, 1, "the YAML is nested too deep to be a contract")]) from None
    documents = [n for n in nodes if n is not None]
    if not documents:
        raise LocatedError([Problem(path, 1, 1, "the contract is empty: a contract is a YAML mapping with `id`, "
                                                "`must_have`, `must_not`, ...")])
    if len(documents) > 1:
        second = documents[1].start_mark
        raise LocatedError([problem_at(path, text, second.line + 1, second.column + 1,
                                       "a contract file holds one YAML document; this is a second one")])
    return documents[0]


def read_contract(path: str, text: str) -> ModelFile:
    """A contract file as a ModelFile holding its one ContractModel (the kind's FileFormat.read)."""
    reader = _Reader(path, text)
    model = reader.read(compose(path, text))
    if reader.problems or model is None:
        raise LocatedError(sorted(reader.problems, key=lambda p: (p.line, p.column)))
    return ModelFile(path=path, text=text, sources=model.sources, models=[model])


def looks_like_contract(text: str) -> bool:
    """Whether a YAML file met in a folder is a contract (the kind's FileFormat.sniff): one mapping with `id` and one
    of must_have, must_not, grounding, recovery, intent_if_exposed, and none of the keys of golden cases, suites or
    gate files (`turns`, `cases`, `input`, `assertions`, `contract`, `release_gate` ...)."""
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError):
        return False  # several documents, or not YAML: not a contract (a golden stream, say)
    if not isinstance(data, dict) or "id" not in data:
        return False
    keys = {str(k) for k in data}
    return bool(keys & set(CONTRACT_MARKS)) and not keys & NOT_CONTRACT_KEYS
