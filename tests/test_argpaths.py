"""mbt.argpaths: dotted paths into structured tool arguments (`handoff.confirmed_fields.recovery_email`)."""

from __future__ import annotations

from mbt.argpaths import flatten, leaves, lookup

HANDOFF = {"user_goal": "recover_account_access",
           "confirmed_fields": {"recovery_email": "lin@example.com"},
           "discarded_fields": {"recovery_email": "li@example.com"},
           "handoff_required": True}


def test_flatten_turns_nested_mappings_into_dotted_paths():
    assert flatten(HANDOFF) == {"user_goal": "recover_account_access",
                                "confirmed_fields.recovery_email": "lin@example.com",
                                "discarded_fields.recovery_email": "li@example.com",
                                "handoff_required": True}


def test_a_key_with_a_dot_is_kept_literal_and_means_what_the_nested_form_means():
    assert flatten({"confirmed_fields.recovery_email": "lin@example.com"}) == \
        flatten({"confirmed_fields": {"recovery_email": "lin@example.com"}})
    assert flatten({"handoff": {"confirmed_fields.recovery_email": 1}}) == {"handoff.confirmed_fields.recovery_email": 1}


def test_leaves_are_values_lists_and_empty_mappings_included():
    assert flatten({"tool": {}, "items": [{"sku": 1}], "n": None}) == {"tool": {}, "items": [{"sku": 1}], "n": None}
    assert flatten({}) == {}
    assert flatten({1: {"a": 2}}) == {"1.a": 2}  # YAML keys that are not text are named as text


def test_a_path_given_two_ways_has_the_value_lookup_finds_and_leaves_show_both():
    """A run may carry both spellings: flatten never fails on it, and agrees with lookup; a golden, which must not
    guess, sees the repetition in `leaves`."""
    for args in ({"a.b": 1, "a": {"b": 2}}, {"a": {"b": 2}, "a.b": 1}, {"x": {"a.b": 1, "a": {"b": 2}}}):
        flat = flatten(args)
        assert all(flat[path] == lookup(args, path)[1] for path in flat)
        assert list(flat.values()) == [1]
        assert sorted(value for _, value in leaves(args)) == [1, 2]  # the path twice
    assert list(leaves({"b": 1, "a": {"y": 2, "x": {}}})) == [("b", 1), ("a.y", 2), ("a.x", {})]  # as written


def test_flatten_does_not_recurse_on_deep_data():
    deep: dict = {}
    inner = deep
    for _ in range(5000):
        inner["x"] = {}
        inner = inner["x"]
    inner["x"] = 1
    (path,) = flatten(deep)
    assert path == ".".join(["x"] * 5001)


def test_lookup_descends_a_nested_mapping():
    assert lookup(HANDOFF, "confirmed_fields.recovery_email") == (True, "lin@example.com")
    assert lookup(HANDOFF, "user_goal") == (True, "recover_account_access")
    assert lookup(HANDOFF, "confirmed_fields") == (True, {"recovery_email": "lin@example.com"})


def test_lookup_says_when_nothing_is_there():
    assert lookup(HANDOFF, "confirmed_fields.phone") == (False, None)
    assert lookup(HANDOFF, "user_goal.length") == (False, None)  # text has no fields
    assert lookup(HANDOFF, "nowhere") == (False, None)
    assert lookup({"n": None}, "n") == (True, None)  # found, and none: not the same as absent


def test_lookup_takes_the_literal_key_first():
    args = {"a.b": 1, "a": {"b": 2}}
    assert lookup(args, "a.b") == (True, 1)
    assert lookup({"a.b": {"c": 3}}, "a.b.c") == (True, 3)  # a literal dotted key on the way
    assert lookup({"a": {"b.c": 4}}, "a.b.c") == (True, 4)
    assert lookup({"a.b": {"x": 0}, "a": {"b": {"c": 5}}}, "a.b.c") == (True, 5)  # the literal key leads nowhere
