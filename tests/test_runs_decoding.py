"""The run readers' fast path (issue 37): msgspec's decoding, typed OTLP spans and the streamed files give exactly
what the careful path gives (Python's json and the readers' own checks), on the shipped runs, on hostile runs and on
the shapes only the fast path meets (mapped files, JSON Lines of several kinds, long digit runs)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from mbt.runs import decoding, genai, reader
from mbt.runs.otlp import SpanProblem, decode_span
from mbt.runs.reader import FileRuns
from tests.fuzz_inputs import hostile_value, run_file

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p for p in (ROOT / "models" / "runs").rglob("*") if p.is_file()) + \
    sorted(p for p in (ROOT / "models" / "traces").rglob("*") if p.is_file())


def _whole_history(self, value):
    """The history decoded whole, as every span's was before the incremental reading (mbt.runs.genai._History)."""
    decoded = genai.decode_json(value)
    found = genai._History(None)
    found.add(decoded if isinstance(decoded, list) else [decoded])
    return found


def read(path: Path, careful: bool = False, monkeypatch=None) -> tuple[list, list, list]:
    if careful:
        monkeypatch.setattr(FileRuns, "_plain", lambda self, data: False)
        monkeypatch.setattr(genai._TraceReader, "history", _whole_history)
    reading = FileRuns(str(path), str(path))
    runs = list(reading)
    if careful:
        monkeypatch.undo()
    return runs, reading.invalid, reading.unread


def same_both_ways(path: Path, monkeypatch) -> tuple[list, list, list]:
    fast = read(path)
    careful = read(path, True, monkeypatch)
    assert fast == careful, path
    return fast


@pytest.mark.parametrize("text", [
    "1", "-0", "1.5e-320", "1e400", "NaN", "-Infinity", '"\\ud800"', '"\\udc00x"', '"\\ud83d\\ude00"', "[1,]",
    '{"a": 1, "a": 2}', " [ 1 , 2 ] ", "9" * 400, "-" + "9" * 4300, "9" * 4301, "0." + "9" * 5000, "[" * 50 + "]" * 50,
    '"\\u0000"', "\ufeff1", "tru", '"a\tb"', "{}", "[]", '"\u2028"'])
def test_loads_gives_what_json_loads_gives(text):
    try:
        expected = json.loads(text)
    except (ValueError, RecursionError) as err:
        with pytest.raises(type(err)):
            decoding.loads(text)
        return
    found = decoding.loads(text)
    assert repr(found) == repr(expected) and type(found) is type(expected)
    assert repr(decoding.loads(text.encode("utf-8", "surrogatepass"))) == repr(expected) or "\\ud8" in text


def test_loads_agrees_with_json_on_random_hostile_values():
    rng = random.Random(37)
    for _ in range(2000):
        text = json.dumps(hostile_value(rng), ensure_ascii=rng.random() < 0.5)
        for marker in ("<5000 digits>",):
            text = text.replace(json.dumps(marker), "9" * 5000)
        try:
            expected = repr(json.loads(text))
        except (ValueError, RecursionError):
            expected = "error"
        try:
            found = repr(decoding.loads(text))
        except (ValueError, RecursionError):
            found = "error"
        assert found == expected, text[:200]


def test_a_typed_span_is_the_record_the_readers_checks_make():
    spans = [s for rs in json.loads((ROOT / "models" / "runs" / "orders-traces.json").read_text())["resourceSpans"]
             for ss in rs["scopeSpans"] for s in ss["spans"]]
    rng = random.Random(7)
    fields = ["name", "kind", "startTimeUnixNano", "endTimeUnixNano", "status", "events", "attributes", "spanId",
              "traceId", "flags", "traceState", "parentSpanId"]
    typed = 0
    for n in range(3000):
        span = json.loads(json.dumps(spans[n % len(spans)]))
        if n % 3:
            where = rng.choice(fields)
            if where == "attributes" and span["attributes"] and rng.random() < 0.7:
                span["attributes"][rng.randrange(len(span["attributes"]))]["value"] = {
                    rng.choice(["stringValue", "intValue", "doubleValue", "boolValue", "arrayValue", "kvlistValue"]):
                        hostile_value(rng)}
            else:
                span[where] = hostile_value(rng)
        text = json.dumps(span).replace(json.dumps("<5000 digits>"), "9" * 5000)
        try:
            raw = json.loads(text)
            json.dumps(raw, ensure_ascii=False).encode("utf-8")  # a lone surrogate: the reader refuses the file
        except ValueError:  # UnicodeEncodeError too
            continue
        try:
            expected: object = decode_span(raw, {})
        except SpanProblem as err:
            expected = str(err)
        except (ValueError, TypeError, OverflowError) as err:  # what the careful checks raise, the fast path must too
            expected = type(err).__name__
        found = decoding.typed_span(text.encode("utf-8", "surrogatepass"))
        if found is not None:
            typed += 1
            assert found == expected, text[:300]
    assert typed > 1000  # most spans are in the common shape


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_the_shipped_runs_read_the_same_both_ways(path, monkeypatch):
    same_both_ways(path, monkeypatch)


def test_hostile_run_files_read_the_same_both_ways_and_mapped(tmp_path, monkeypatch):
    for seed in range(300):
        item = run_file(seed)
        (name, data), = item.files.items()
        path = tmp_path / f"{seed}-{name}"
        path.write_bytes(data)
        fast = same_both_ways(path, monkeypatch)
        monkeypatch.setattr(reader, "MAPPED_FROM", 0)  # the file mapped into memory, not read
        assert read(path) == fast, seed
        monkeypatch.undo()


def _span(trace: str, n: int, **attributes) -> dict:
    return {"traceId": trace, "spanId": f"{n:016x}", "name": "chat", "startTimeUnixNano": str(n),
            "endTimeUnixNano": str(n + 1), "attributes": [{"key": k.replace("__", "."), "value": {"stringValue": v}}
                                                          for k, v in attributes.items()]}


def _chat(trace: str, n: int, text: str) -> dict:
    return _span(trace, n, gen_ai__operation__name="chat", gen_ai__input__messages=json.dumps(
        [{"role": "user", "content": text}]))


def test_json_lines_of_several_kinds_give_each_kinds_runs_in_turn_as_before(tmp_path, monkeypatch):
    transcript = {"messages": [{"role": "user", "content": "cancel SO-1"}]}
    rag = {"query": "forgot pwd", "retrieved": [], "claims": []}
    lines = [transcript, _chat("b" * 32, 1, "hi"), "not a run", rag, {"resourceSpans": [
        {"scopeSpans": [{"spans": [_chat("a" * 32, 2, "again"), _chat("b" * 32, 3, "later")]}]}]},
        transcript, _span("c" * 32, 4, gen_ai__operation__name="dance")]
    text = "\n".join(json.dumps(x) for x in lines) + "\n{broken\n\n" + json.dumps({"traceId": 5, "spanId": "x"})
    path = tmp_path / "mixed.jsonl"
    path.write_text(text, encoding="utf-8")
    runs, invalid, unread = same_both_ways(path, monkeypatch)
    assert [(r.format, r.id) for r in runs] == [("messages", "mixed:1"), ("messages", "mixed:6"),
                                                ("otlp-spans", "a" * 32), ("otlp-spans", "b" * 32), ("rag", "mixed:4")]
    assert [i.where for i in invalid] == [f"{path}:8:2", f"{path}:3", f"{path}:10", f"{path}:7"]


def test_a_long_digit_run_leaves_its_line_to_json_and_only_its_line(tmp_path, monkeypatch):
    digits = "9" * 5000
    good = json.dumps({"messages": [{"role": "user", "content": "hi"}]})
    text = "\n".join([good, '{"messages": [], "n": ' + digits + "}", good, '{"messages": [{"role": "user", "content": "'
                      + digits + '"}]}'])
    path = tmp_path / "long.jsonl"
    path.write_text(text, encoding="utf-8")
    runs, invalid, _ = same_both_ways(path, monkeypatch)
    assert [r.where for r in runs] == [f"{path}:1", f"{path}:3", f"{path}:4"]
    assert [i.where for i in invalid] == [f"{path}:2:1"] and "Exceeds the limit" in invalid[0].message
    assert decoding.long_digit_runs(text.encode()) != [] and decoding.long_digit_runs(good.encode()) == []
    # a document holding one is not JSON for Python as a whole: none of its spans is read
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [_chat("a" * 32, 1, "hi"), dict(_chat("b" * 32, 2, "x"),
                                                                                        flags=0)]}]}]}
    path = tmp_path / "long.json"
    path.write_text(json.dumps(doc).replace('"flags": 0', '"flags": ' + digits), encoding="utf-8")
    runs, invalid, _ = same_both_ways(path, monkeypatch)
    assert runs == [] and len(invalid) == 1


def test_a_file_is_streamed_a_run_at_a_time(tmp_path):
    # A transcript line becomes a run as it is read: after the first run, the broken line further down is not read
    # yet. An OTLP file's spans stay undecoded until their trace's turn comes.
    good = json.dumps({"messages": [{"role": "user", "content": "hi"}]})
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([good, good, "{broken", good]), encoding="utf-8")
    reading = FileRuns(str(path), str(path))
    stream = iter(reading)
    next(stream)
    assert reading._decode_problems == []
    assert len(list(stream)) == 2 and len(reading.invalid) == 1
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [_chat(f"{n:032x}", n, "hi") for n in range(1, 6)]}]}]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    reading = FileRuns(str(path), str(path))
    stream = iter(reading)
    first = next(stream)
    otlp = reading._streams["otlp"]
    assert first.id == f"{1:032x}" and len(otlp.traces) == 4
    assert all(type(source) is not dict for spans in otlp.traces.values() for *_, source, _ in spans)


def test_a_growing_history_decodes_what_each_span_adds_and_reads_as_a_whole_one(tmp_path, monkeypatch):
    spans, history = [], []
    for n in range(60):
        history.append({"role": "user", "parts": [{"type": "text", "content": f"message {n} [{{"}]})
        if n % 7 == 3:
            history.append({"role": "tool", "id": f"c{n}", "content": json.dumps({"ok": n})})
        text = json.dumps(history) + (" " if n == 40 else "")  # one history that ends in a space: no extension
        spans.append(_span("a" * 32, 2 * n + 1, gen_ai__operation__name="chat", gen_ai__input__messages=text))
        if n % 5 == 0:  # the same history again
            spans.append(_span("a" * 32, 2 * n + 2, gen_ai__operation__name="chat", gen_ai__input__messages=text))
    path = tmp_path / "history.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}), encoding="utf-8")
    (run,), _, _ = same_both_ways(path, monkeypatch)
    assert [s.text for s in run.steps if s.kind == "user"] == [f"message {n} [{{" for n in range(60)]


def test_a_json_file_holding_one_span_is_read_as_before(tmp_path, monkeypatch):
    # A .json file (not JSON Lines) whose document is a single span: its run's place is the file, not "file:1".
    path = tmp_path / "span.json"
    path.write_text(json.dumps(_chat("a" * 32, 1, "hi")), encoding="utf-8")
    (run,), invalid, _ = same_both_ways(path, monkeypatch)
    assert run.where == str(path) and run.format == "otlp-spans" and invalid == []
    path.write_text(json.dumps({"traceId": 7, "spanId": "1"}), encoding="utf-8")
    runs, invalid, _ = same_both_ways(path, monkeypatch)
    assert runs == [] and [i.where for i in invalid] == [str(path)]
