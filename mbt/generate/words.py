"""User words for generated tests: the text one of the model's `bind text` / `bind regex` declarations takes to an
event with given arguments, checked with the binder that golden replay and `mbt runs` use.

A regular expression's examples are built from the parse tree of Python's own `re` parser: the first alternative,
the fewest repetitions, the first characters of a class, and a named group replaced by the argument it must capture.
(No maintained library with a permissive licence does this: exrex is AGPL, sre_yield unmaintained, rstr random; none
fixes a group's value.) Whatever is built is kept only if the binder takes it to the event with exactly those
arguments.
"""

from __future__ import annotations

import itertools
import re
import re._constants as sre  # the opcodes of the parse tree re._parser builds
import re._parser as sre_parse
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from mbt.analysis.smt import constants_of
from mbt.goldens.binding import Binder
from mbt.goldens.cases import Turn
from mbt.model.fsm import FsmModel

WIDTH = 4  # alternatives kept per part of a pattern: the first examples are all the generator needs
READABLE = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)] + \
    [chr(c) for c in range(ord("0"), ord("9") + 1)] + [" ", "-", "."]
CATEGORIES = {sre.CATEGORY_DIGIT: "0123456789", sre.CATEGORY_WORD: "abcdefghij", sre.CATEGORY_SPACE: " ",
              sre.CATEGORY_NOT_DIGIT: "abcdefghij", sre.CATEGORY_NOT_WORD: " -.", sre.CATEGORY_NOT_SPACE: "abcdefghij"}


class Unsupported(Exception):
    """A construct the example builder does not write (backreferences to conditional groups, ...)."""


def examples(pattern: str, values: dict[str, str] | None = None, limit: int = WIDTH) -> list[str]:
    """Up to `limit` texts for `pattern`, in a fixed order (the shortest, most plain first); the named groups in
    `values` are written as those values. Empty when the pattern cannot be written out."""
    try:
        parsed = sre_parse.parse(pattern)
    except re.error:
        return []
    groups = {number: values[name] for name, number in parsed.state.groupdict.items() if values and name in values}
    try:
        return list(itertools.islice(_sequence(list(parsed), groups), limit))
    except (Unsupported, RecursionError):
        return []


def _sequence(items: list, groups: dict[int, str]) -> Iterator[str]:
    parts = [list(itertools.islice(_item(op, av, groups), WIDTH)) for op, av in items]
    for chosen in itertools.product(*parts):
        yield "".join(chosen)


def _item(op, av, groups: dict[int, str]) -> Iterator[str]:
    if op is sre.LITERAL:
        yield chr(av)
    elif op is sre.NOT_LITERAL:
        yield from (c for c in READABLE if c != chr(av))
    elif op is sre.ANY:
        yield from READABLE
    elif op is sre.IN:
        yield from _class(av)
    elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, high, sub = av
        for count in range(low, min(high, low + 1) + 1):
            yield from _sequence(list(sub) * count, groups)
    elif op is sre.BRANCH:
        for alternative in av[1]:
            yield from _sequence(list(alternative), groups)
    elif op is sre.SUBPATTERN:
        number, sub = av[0], av[-1]
        if number in groups:
            yield groups[number]
        else:
            yield from _sequence(list(sub), groups)
    elif op is sre.ATOMIC_GROUP:
        yield from _sequence(list(av), groups)
    elif op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
        yield ""  # anchors and lookarounds write nothing; the binder's check says whether the text still matches
    else:
        raise Unsupported(str(op))


def _class(items) -> Iterator[str]:
    allowed: list[str] = []
    negate = False
    for op, av in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            allowed.append(chr(av))
        elif op is sre.RANGE:
            allowed.extend(chr(c) for c in range(av[0], min(av[1], av[0] + WIDTH) + 1))
        elif op is sre.CATEGORY:
            allowed.extend(CATEGORIES.get(av, ""))
        else:
            raise Unsupported(str(op))
    if negate:
        excluded = set(allowed)
        yield from (c for c in READABLE if c not in excluded)
    else:  # the plainest first: `[A-Za-z]` starts with `a`
        yield from sorted(dict.fromkeys(allowed), key=lambda c: (READABLE.index(c) if c in READABLE else len(READABLE)))


class Words:
    """The words a user says for each event of one FSM, where its bindings give them."""

    def __init__(self, model: FsmModel):
        self.model = model
        self.binder = Binder(model)
        self.bindings: dict[str, list] = {}
        for b in model.bindings:
            if b.how in ("text", "regex"):
                self.bindings.setdefault(b.event, []).append(b)
        self.observable = set(self.bindings) | {b.event for b in model.tool_bindings}
        # The strings a run's values may meet in a comparison besides each other: the literals the model writes and
        # the variables' defaults (`var customer: string = "alice"`, compared in `[w == customer]`).
        self.constants = {v for v in constants_of(model.expressions()) if isinstance(v, str)}
        self.constants |= {v.initial for v in model.variables.values() if isinstance(v.initial, str)}

    def text(self, event: str, args: dict[str, Any]) -> str | None:
        """The first text of the event's bindings that binds to it with exactly `args`; None: no binding gives one."""
        given = {k: v for k, v in args.items() if v is not None}
        for b in self.bindings.get(event, ()):
            if b.how == "text":
                candidates = [] if given else [b.pattern]
            elif all(_spelled(v) for v in given.values()) and set(given) <= set(re.compile(b.pattern).groupindex):
                # A group is written as the text the binder reads back as the value: an int or decimal in digits.
                candidates = examples(b.pattern, {k: str(v) for k, v in given.items()})
            else:
                candidates = []
            for text in candidates:
                if self._binds(text, event, given):
                    return text
        return None

    def _binds(self, text: str, event: str, given: dict[str, Any]) -> bool:
        bound = self.binder.bind(Turn(user=text))
        return not isinstance(bound, str) and bound.event == event and bound.args == given

    def fit(self, precondition: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict]]:
        """The events with each string argument that no binding can say (an `email-1` where a regex wants an e-mail
        address) renamed, throughout the run, to a value one can. Strings are only ever compared for equality, so a
        renaming that is one-to-one and avoids the model's constants and every other value of the run changes
        nothing the model does; values the precondition or the model name (literals, variables' defaults) are
        kept, since renaming them would break an equality the run relies on (their steps keep a TODO instead)."""
        taken = {v for _, a in events for v in a.values() if isinstance(v, str)}
        kept = self.constants | {v for v in precondition.values() if isinstance(v, str)}
        wanted: dict[str, list[str]] = {}  # value -> the group patterns it must fit, where a step cannot say it now
        for event, args in events:
            if self.text(event, args) is not None:
                continue
            for b in self.bindings.get(event, ()):
                if b.how != "regex":
                    continue
                for name, pattern in _group_patterns(b.pattern).items():
                    value = args.get(name)
                    if isinstance(value, str) and value not in kept and not re.fullmatch(pattern, value):
                        wanted.setdefault(value, []).append(pattern)
        renamed: dict[str, str] = {}
        for value, patterns in wanted.items():
            fitting = (c for c in examples(patterns[0], limit=len(taken) + len(renamed) + WIDTH)
                       if c not in taken and c not in kept and all(re.fullmatch(p, c) for p in patterns))
            new = next(fitting, None)
            if new is not None:
                renamed[value] = new
                taken.add(new)
        if not renamed:
            return events
        return [(event, {k: renamed.get(v, v) if isinstance(v, str) else v for k, v in args.items()})
                for event, args in events]


def _spelled(value: Any) -> bool:
    """Whether a regex group can say the value: a string as it is, an int or a decimal in digits (the binder reads
    the digits back by the parameter's type, mbt.goldens.binding.captured_value)."""
    return isinstance(value, (str, int, Decimal)) and not isinstance(value, bool)


def _group_patterns(pattern: str) -> dict[str, str]:
    """Each named group's own pattern, as written (`(?P<email>...)` -> `...`), with the whole pattern's flags."""
    out: dict[str, str] = {}
    flags = re.match(r"\(\?[aiLmsux]+\)", pattern)
    prefix = flags.group(0) if flags else ""
    for found in re.finditer(r"\(\?P<(\w+)>", pattern):
        depth, i, in_class = 1, found.end(), False
        while i < len(pattern) and depth:
            ch = pattern[i]
            if ch == "\\":
                i += 2
                continue
            if in_class:
                in_class = ch != "]"
            elif ch == "[":
                in_class = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            i += 1
        if depth == 0:
            out[found.group(1)] = prefix + pattern[found.end():i - 1]
    return out
