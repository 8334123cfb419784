"""Rule assertions written in goldens, with promptfoo's names where they fit, and seed 000's must_have / must_not.

An assertion is a mapping: `type`, usually `value`, optionally `criterion` (the criterion it decides; `accuracy` when
not given) and, for `number`, `tolerance`. Types:

- `contains` / `icontains`: the answer holds the text (icontains: folded — case, Unicode forms, white space and where
  Vietnamese puts a tone mark do not matter); `contains-all` / `contains-any` (and the `i` forms): a list of texts.
- `regex`: Python's `re.search` finds the pattern in the answer.
- `equals`: the answer, without leading and trailing white space, is the text; a mapping or list value is compared
  as JSON with the answer parsed as JSON.
- `starts-with`: the answer, without leading white space, starts with the text.
- `is-json`: the whole answer is JSON; with a `value`, a JSON Schema it must also satisfy. `json-schema`: the same
  with the schema required.
- `number`: the answer states the number `value` (as 1,500,000 or 1.500.000 or 1,5 triệu or 150万…) within
  `tolerance`, absolute (`0.5`) or relative (`"2%"`); 0 by default.
- `must_have` / `must_not` (seed 000): a phrase or a list of phrases, compared folded like `icontains`; must_have
  passes when every phrase is there, must_not when none is. Both are literal: a phrase written as a description of
  behaviour ("asks for the current password") is judged by the embedded or the LLM judge, not here.

Every type can be negated by prefixing `not-` (promptfoo's rule): `not-contains`, `not-regex`… A malformed assertion
(unknown type, missing value, bad regex, bad schema, bad tolerance) becomes a located Problem (`problems()`) and its
verdict is `error`, never `pass`.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from mbt.errors import Problem, did_you_mean
from mbt.judges.facts import quantities
from mbt.judges.text import fold
from mbt.judges.verdicts import JudgeInput, OneByOne, Verdict, VerdictValue

RULES_VERSION = "rules-1"
TEXT_TYPES = ("contains", "icontains", "starts-with", "equals")
LIST_TYPES = ("contains-all", "contains-any", "icontains-all", "icontains-any")
TYPES = TEXT_TYPES + LIST_TYPES + ("regex", "is-json", "json-schema", "number", "must_have", "must_not")
KEY = re.compile(r"[a-z][a-z0-9_-]{0,63}\Z")


@dataclass(frozen=True)
class Assertion:
    """One parsed assertion. `problem` is set when it is malformed (then it only ever gives `error`)."""

    type: str
    value: Any = None
    negated: bool = False
    criterion: str = "accuracy"
    tolerance: Decimal = Decimal(0)
    relative: bool = False
    label: str = ""  # "assert[2] (regex)": how messages name it
    problem: Problem | None = None
    compiled: Any = field(default=None, compare=False, repr=False)  # the regex or the schema validator

    @property
    def name(self) -> str:
        return ("not-" if self.negated else "") + self.type


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def parse_assertions(specs: Iterable[object], *, path: str = "<assertions>", line: int = 1, column: int = 1,
                     start: int = 0) -> list[Assertion]:
    """Each spec parsed; a malformed one carries a Problem at path:line:column naming `assert[i]`."""
    return [_parse(spec, index, path, line, column) for index, spec in enumerate(specs, start)]


def contract_phrases(must_have: Sequence[str] = (), must_not: Sequence[str] = (), *, criterion: str = "accuracy",
                     path: str = "<assertions>", line: int = 1, column: int = 1) -> list[Assertion]:
    """Seed 000's `assertions.must_have` / `must_not` lists as two assertions (none for an empty list)."""
    specs = [{"type": kind, "value": list(phrases), "criterion": criterion}
             for kind, phrases in (("must_have", must_have), ("must_not", must_not)) if phrases]
    return parse_assertions(specs, path=path, line=line, column=column)


def problems(assertions: Iterable[Assertion]) -> list[Problem]:
    """The located problems of the malformed assertions, for the caller to report."""
    return [a.problem for a in assertions if a.problem is not None]


def _parse(spec: object, index: int, path: str, line: int, column: int) -> Assertion:
    label = f"assert[{index}]"

    def bad(message: str, kind: str = "") -> Assertion:
        named = f"{label} ({kind})" if kind else label
        return Assertion(kind or "?", label=named, problem=Problem(path, line, column, f"{named}: {message}"))

    if not isinstance(spec, Mapping):
        return bad(f"an assertion is a mapping with a `type`, not {type(spec).__name__}")
    raw_type = spec.get("type")
    if not isinstance(raw_type, str) or not raw_type:
        return bad("an assertion needs a `type` (" + ", ".join(TYPES) + ")")
    negated = raw_type.startswith("not-")
    kind = raw_type[4:] if negated else raw_type
    if kind not in TYPES:
        return bad(f"unknown assertion type `{raw_type}`{did_you_mean(kind, TYPES)}", raw_type)
    label = f"{label} ({raw_type})"
    criterion = spec.get("criterion", "accuracy")
    if not isinstance(criterion, str) or not KEY.match(criterion):
        return bad(f"`criterion` must be a criterion key such as accuracy or safety, not {criterion!r}", raw_type)
    value = spec.get("value")
    base = Assertion(kind, value, negated, criterion, label=label)
    try:
        return _checked(base, spec)
    except ValueError as error:
        return Assertion(kind, value, negated, criterion, label=label,
                         problem=Problem(path, line, column, f"{label}: {error}"))


def _checked(a: Assertion, spec: Mapping[str, Any]) -> Assertion:
    """The assertion with its value checked (and compiled); ValueError says what is wrong."""
    kind, value = a.type, a.value
    if kind == "is-json" and value is None:
        return a
    if value is None or value == "" or value == []:
        raise ValueError(f"`{kind}` needs a `value`")
    if kind in TEXT_TYPES:
        if kind == "equals" and isinstance(value, (dict, list)):
            return a
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ValueError(f"the value of `{kind}` is a text, not {type(value).__name__}")
        return _replace(a, value=_nfc(str(value)))
    if kind in LIST_TYPES or kind in ("must_have", "must_not"):
        phrases = [value] if isinstance(value, str) and kind in ("must_have", "must_not") else value
        if not isinstance(phrases, list) or not all(isinstance(p, (str, int, float)) for p in phrases):
            raise ValueError(f"the value of `{kind}` is a list of texts")
        return _replace(a, value=tuple(_nfc(str(p)) for p in phrases))
    if kind == "regex":
        if not isinstance(value, str):
            raise ValueError("the value of `regex` is a regular expression (a text)")
        try:
            return _replace(a, compiled=re.compile(value))
        except re.error as error:
            raise ValueError(f"bad regular expression {value!r}: {error}") from None
    if kind in ("is-json", "json-schema"):
        return _replace(a, compiled=_schema_validator(value))
    # number
    number = _decimal(value, "the value of `number`")
    tolerance, relative = Decimal(0), False
    if "tolerance" in spec:
        raw = spec["tolerance"]
        text = str(raw).strip()
        relative = text.endswith("%")
        tolerance = _decimal(text[:-1] if relative else raw, "`tolerance`")
        if tolerance < 0:
            raise ValueError(f"`tolerance` must not be negative ({raw})")
    return _replace(a, value=number, tolerance=tolerance, relative=relative)


def _replace(a: Assertion, **changes: Any) -> Assertion:
    from dataclasses import replace

    return replace(a, **changes)


def _decimal(value: object, what: str) -> Decimal:
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a number, not {value!r}")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(f"{what} must be a number, not {value!r}") from None
    if not number.is_finite():
        raise ValueError(f"{what} must be a finite number")
    return number


def _schema_validator(schema: object) -> Any:
    import jsonschema  # only where a schema is declared
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, (dict, bool)):
        raise ValueError(f"bad JSON Schema: a schema is a mapping, not {type(schema).__name__}")
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as error:
        raise ValueError(f"bad JSON Schema: {error.message}") from None
    return cls(schema)


# ---------------------------------------------------------------- evaluation


def _outcome(a: Assertion, actual: str) -> tuple[bool, str]:
    """(holds, what was found) for a well-formed assertion, before negation."""
    kind, value = a.type, a.value
    if kind == "contains":
        return value in _nfc(actual), f"{value!r} {'found' if value in _nfc(actual) else 'not found'}"
    if kind == "icontains":
        found = fold(value) in fold(actual)
        return found, f"{value!r} {'found' if found else 'not found'} (ignoring case)"
    if kind in LIST_TYPES or kind in ("must_have", "must_not"):
        folded = kind.startswith("i") or kind.startswith("must")
        haystack = fold(actual) if folded else _nfc(actual)
        present = [p for p in value if (fold(p) if folded else p) in haystack]
        missing = [p for p in value if p not in present]
        if kind.endswith("-any"):
            return bool(present), f"found {present}" if present else f"none of {list(value)} found"
        if kind == "must_not":
            return not present, f"forbidden phrase found: {present}" if present else "no forbidden phrase found"
        return not missing, f"missing {missing}" if missing else f"all of {list(value)} found"
    if kind == "regex":
        m = a.compiled.search(actual)
        return m is not None, f"/{value}/ matched {m.group(0)!r}" if m else f"/{value}/ did not match"
    if kind == "equals":
        if isinstance(value, (dict, list)):
            try:
                parsed = json.loads(actual)
            except ValueError:
                return False, "the answer is not JSON"
            return parsed == value, "JSON equal" if parsed == value else "JSON differs"
        same = _nfc(actual).strip() == value
        return same, "equal" if same else f"{actual.strip()[:80]!r} is not {value!r}"
    if kind == "starts-with":
        starts = _nfc(actual).lstrip().startswith(value)
        return starts, f"starts with {value!r}" if starts else f"does not start with {value!r}"
    if kind in ("is-json", "json-schema"):
        try:
            parsed = json.loads(actual)
        except ValueError as error:
            return False, f"the answer is not JSON ({error})"
        if a.compiled is None:
            return True, "the answer is JSON"
        errors = sorted(a.compiled.iter_errors(parsed), key=lambda e: list(e.absolute_path))
        if errors:
            where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
            return False, f"schema not satisfied at {where}: {errors[0].message}"
        return True, "the answer satisfies the schema"
    # number
    stated = sorted({v for q in quantities(actual) for v in q.values})
    allowed = a.tolerance * abs(value) / 100 if a.relative else a.tolerance
    close = [v for v in stated if abs(v - value) <= allowed]
    shown = f"{value}" + (f" ± {a.tolerance}{'%' if a.relative else ''}" if a.tolerance else "")
    if close:
        return True, f"states {close[0]} (expected {shown})"
    return False, f"states no number within {shown}" + (f" (found {', '.join(map(str, stated))})" if stated else "")


def evaluate(a: Assertion, actual: str) -> Verdict:
    """One assertion on one answer."""
    if a.problem is not None:
        return Verdict("error", f"{a.problem.path}:{a.problem.line}:{a.problem.column}: {a.problem.message}",
                       RuleJudge.name, RULES_VERSION)
    holds, detail = _outcome(a, actual)
    if a.negated:
        holds = not holds
    return Verdict("pass" if holds else "fail", f"{a.name}: {detail}", RuleJudge.name, RULES_VERSION)


def check_assertions(assertions: Iterable[Assertion], actual: str) -> Verdict:
    """All the assertions on one answer: error if one is malformed, else fail if one fails, else pass;
    not_judged when there are none."""
    verdicts = [evaluate(a, actual) for a in assertions]
    if not verdicts:
        return Verdict("not_judged", "no rule assertion for this criterion", RuleJudge.name, RULES_VERSION)
    for wanted in ("error", "fail"):
        hit = [v.reason for v in verdicts if v.verdict == wanted]
        if hit:
            value: VerdictValue = "error" if wanted == "error" else "fail"
            return Verdict(value, "; ".join(hit), RuleJudge.name, RULES_VERSION)
    return Verdict("pass", "; ".join(v.reason for v in verdicts), RuleJudge.name, RULES_VERSION)


def forbidden_said(assertions: Iterable[Assertion], actual: str) -> list[str]:
    """The phrases of the well-formed `must_not` assertions that the answer says (folded, as `must_not` compares),
    in the order written; the same phrase once."""
    folded = fold(actual)
    said = [p for a in assertions if a.type == "must_not" and not a.negated and a.problem is None
            for p in a.value if fold(p) in folded]
    return list(dict.fromkeys(said))


class RuleJudge(OneByOne):
    """The rule judge: a criterion's assertions decide it; a criterion without assertions is not judged."""

    name = "rules"
    version = RULES_VERSION

    def judge(self, item: JudgeInput) -> Verdict:
        return check_assertions([a for a in item.assertions if a.criterion == item.criterion.key], item.actual)
