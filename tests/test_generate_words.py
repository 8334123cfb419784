"""User words for generated tests (mbt/generate/words.py): examples of a binding's regular expression with its groups
set, checked with the binder, and the renaming of string arguments no binding can say."""

from __future__ import annotations

import re

import pytest

from mbt.api import load_models
from mbt.generate.skeleton import SkeletonBuilder
from mbt.generate.words import Words, examples
from mbt.goldens.binding import Binder
from mbt.goldens.cases import Turn
from mbt.kind import support


@pytest.fixture(scope="module")
def recovery():
    _, models = load_models(["models/recovery.fsm"])
    return models[0]


@pytest.mark.parametrize("pattern", [r"(?P<n>[A-Z]{2}-[0-9]{4,})", r"(?i)(wrong|actually).*?(?P<e>\w+@\w+[.]com)",
                                     r"^yes\b|^ok$", r"[^abc]x{0,2}(?:y|z)+", r"\d\s\D\S\W"])
def test_examples_match_their_pattern_in_a_fixed_order(pattern):
    found = examples(pattern, limit=5)
    assert found and found == examples(pattern, limit=5) and len(set(found)) == len(found)
    assert all(re.search(pattern, text) for text in found)


def test_a_group_is_written_as_its_value():
    [text] = examples(r"(?i)(wrong|actually).*?(?P<email>[a-z.]+@[a-z]+[.]com)", {"email": "li@mail.com"}, 1)
    assert re.search(r"(?i)(wrong|actually).*?(?P<email>[a-z.]+@[a-z]+[.]com)", text).group("email") == "li@mail.com"


def test_unwritable_patterns_give_nothing():
    assert examples(r"(a)(?(1)b|c)") == [] and examples("(") == []


def test_words_bind_back_to_their_event_with_their_arguments(recovery):
    words, binder = Words(recovery), Binder(recovery)
    cases = [("request_reset", {}), ("provide_email", {"email": "li@example.com"}),
             ("correct_email", {"email": "lin@example.com"}), ("confirm_email", {}), ("resume", {})]
    for event, args in cases:
        text = words.text(event, args)
        bound = binder.bind(Turn(user=text))
        assert (bound.event, bound.args) == (event, args), text
    assert words.text("provide_email", {"email": "email-1"}) is None  # no address: the regex cannot capture it
    assert words.text("tool_succeeded", {}) is None and "tool_succeeded" not in words.observable


def test_fit_renames_what_no_binding_can_say_one_to_one_and_keeps_the_run(recovery):
    words = Words(recovery)
    events = [("provide_email", {"email": "email-1"}), ("correct_email", {"email": "email-2"}),
              ("tool_failed", {"code": "TIMEOUT"}), ("correct_email", {"email": "email-1"})]
    fitted = words.fit({}, events)
    first, second = fitted[0][1]["email"], fitted[1][1]["email"]
    assert first != second and fitted[3][1]["email"] == first and fitted[2] == events[2]
    assert all(words.text(event, args) is not None for event, args in fitted[:2])
    # The model does the same on both runs: the renamed values take the same transitions.
    builder = SkeletonBuilder(recovery, support("fsm").enumerate(recovery))
    before = builder.replay_events({}, events[:3]).snapshots
    after = builder.replay_events({}, fitted[:3]).snapshots
    assert [s.transition for s in before] == [s.transition for s in after]
    # A value the precondition holds is the user's: kept (its step keeps the TODO).
    kept = words.fit({"recovery_email": "email-1"}, events[:1])
    assert kept == events[:1]
