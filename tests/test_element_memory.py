"""Elements are small and survive the compiled-model cache whole: a large model holds hundreds of thousands of them
(issue 14: memory may grow with the model, so each element's share counts)."""

from __future__ import annotations

import pickle

from memory import peak_while

from mbt.elements.base import Element
from mbt.model.common import Location, Severity, Span, Status

LOCATION = Location(file="big.fsm", line=3, column=5)


def many(n: int) -> list[Element]:
    return [Element(id=f"transition-pair:s{i}.e->s{i + 1}|s{i + 1}.e->s{i + 2}", model="big", kind="fsm",
                    criterion="transition-pair", label=f"s{i} -> s{i + 1} -> s{i + 2} (e, e)", location=LOCATION)
            for i in range(n)]


def test_an_element_costs_a_few_hundred_bytes_once_loaded_from_the_cache():
    data = pickle.dumps(many(20_000), protocol=pickle.HIGHEST_PROTOCOL)
    kept: list[list[Element]] = []
    peak = peak_while(lambda: kept.append(pickle.loads(data)))
    assert len(kept[0]) == 20_000
    # A pydantic BaseModel element cost about 1,600 bytes (its dict and its set of fields given); the slotted
    # dataclass with these two strings about 400.
    assert peak / 20_000 < 700


def test_an_element_comes_back_from_the_cache_equal_and_still_its_own():
    element = Element(id="guard:t1", model="m", kind="fsm", criterion="guard", label="guard of t1", location=LOCATION,
                      span=Span(source="doc.md", line_start=1, line_end=2, loc=LOCATION), status=Status.stated, severity=Severity.high,
                      weight=3.0, feasible=False, reason="never", tags=["REQ-1"])
    again = pickle.loads(pickle.dumps(element, protocol=pickle.HIGHEST_PROTOCOL))
    assert again == element and type(again) is Element
    again.tags.append("REQ-2")  # its lists are its own, not shared with the original or the defaults
    assert element.tags == ["REQ-1"] and many(1)[0].tags == []
