"""Hostile inputs for the fuzz suite (tests/test_fuzz.py) and the longer campaign (tests/bench/fuzz_campaign.py).

Each family turns a seed (an int) into one input: a mutated or generated file for one of mbt's readers, and the
command that reads it. `judge` runs the command in-process and says what happened; the contract it checks is issue
14's: exit 0/1/2 for anything a user can give (3 only for a bug in mbt), never a traceback, every exit 2 with a
`file:line[:col]` message and nothing on stdout, `read = valid + invalid` for goldens (and for JSON Lines, one case
per non-empty line), and no partial output (no temporary file left, no report when the run failed).
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "recovery.fsm"

# Pieces that hostile inputs are made of: syntax of every format, the model's own words, and known trouble.
TOKENS = ["{", "}", "[", "]", "(", ")", ":", ",", "->", "/", ":=", "==", "!=", " or ", " and ", " not ", "+", "-",
          "\"", "'", "\\", "\n", "\t", " ", "#", "@", "state", "event", "fsm", "var", "bind", "forbid", "initial",
          "final", "int[0..3]", "bool", "string?", "none", "true", "1e309", "9" * 5000, "\u2028", "\ufeff", "\x00",
          "\ud800", "é", "测试", "\u202e", "- ", "---", "&a", "*a", "!!python/object:os.system", "<<: *a", "~",
          "collecting_email", "request_reset", "recovery_email", "turns", "id", "user", "event", "assert_state"]


def mutate(text: str, rng: random.Random, edits: int) -> str:
    """`edits` random edits (delete, duplicate, insert a token, swap two slices) of `text`."""
    for _ in range(edits):
        if not text:
            text = rng.choice(TOKENS)
            continue
        i = rng.randrange(len(text))
        j = min(len(text), i + rng.randint(1, 12))
        op = rng.randrange(4)
        if op == 0:
            text = text[:i] + text[j:]
        elif op == 1:
            text = text[:i] + text[i:j] * rng.randint(2, 50) + text[j:]
        elif op == 2:
            text = text[:i] + rng.choice(TOKENS) + text[i:]
        else:
            k = rng.randrange(len(text))
            a, b = sorted((i, k))
            text = text[:a] + text[b:b + (j - i)] + text[a + (j - i):b] + text[a:a + (j - i)] + text[b + (j - i):]
    return text


def json_value(rng: random.Random, depth: int = 0) -> object:
    """A random JSON value with the shapes goldens have, and every wrong type in their places."""
    roll = rng.random()
    if depth > 3 or roll < 0.3:
        return rng.choice([None, True, False, 0, -1, 5, 1.5, 10 ** 30, "", "x", "collecting_email",
                           "lin@example.com", "I forgot my password", "\ud800", "\u2028", "10", [], {}])
    if roll < 0.55:
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(GOLDEN_KEYS): json_value(rng, depth + 1) for _ in range(rng.randint(0, 5))}


GOLDEN_KEYS = ["id", "turns", "user", "event", "args", "assert_state", "state", "precondition", "assertions",
               "final_assertions", "decisions", "table", "inputs", "expect", "model", "contract", "must_not",
               "must_not_call", "tool_arguments", "discarded", "intent", "input", "expected_intent", "rejected"]


def golden_case(rng: random.Random, number: int) -> dict:
    """A valid-looking golden of the recovery model, then with one field replaced by a random value."""
    case: dict = {"id": f"F-{number}", "contract": "password-reset-v1",
                  "turns": [{"user": rng.choice(["I forgot my password", "my e-mail is lin@example.com", "yes"])}
                            for _ in range(rng.randint(1, 3))]}
    if rng.random() < 0.7:
        target = rng.choice([case, case["turns"][0]])
        target[rng.choice(GOLDEN_KEYS)] = json_value(rng)
    return case


@dataclass
class Input:
    family: str
    files: dict[str, bytes]  # name -> content, written into a fresh folder
    args: list[str]  # the command; "{dir}" is the folder
    jsonl_cases: int | None = None  # for a JSON Lines golden file: how many cases it holds (one per line)
    notes: list[str] = field(default_factory=list)


def expression(rng: random.Random, depth: int = 0) -> str:
    """A random guard over the recovery-like model below: nested groups, long chains, every operator."""
    if depth > 4 or rng.random() < 0.25:
        return rng.choice(["b", "not b", "x > 1", "x + 1 == 2", "s == none", "s != \"a\"", "e in {p, q}",
                           "true", "x - 3 < x", "y", "x == \"1\"", "x + b > 0"])
    roll = rng.random()
    if roll < 0.15:
        op = rng.choice([" or ", " and ", " + "])
        item = "b" if op != " + " else "x"
        return "(" + op.join([item] * rng.randint(2, 1500)) + (" > 0" if op == " + " else "") + ")"
    if roll < 0.25:
        return "not " * rng.randint(1, 600) + "(" + expression(rng, depth + 1) + ")"
    if roll < 0.3:
        return "(" * 150 + "b" + ")" * 150
    return "(" + expression(rng, depth + 1) + rng.choice([" or ", " and "]) + expression(rng, depth + 1) + ")"


GENERATED = """fsm g {{
  var b: bool = false
  var x: int[0..3] = 0
  var s: string? = none
  var e: enum{{p, q, r}} = p
  state a initial
  state z final
  event go(y: bool)
  a -> z on go(y) [{guard}] / x := x + 1
  forbid a on go [{forbid}]
}}
"""


def dsl(seed: int) -> Input:
    rng = random.Random(seed)
    if rng.random() < 0.3:  # generated from the grammar's expression rules rather than mutated
        text = GENERATED.format(guard=expression(rng), forbid=expression(rng))
        return Input("dsl", {"g.fsm": text.encode("utf-8")}, ["check", "{dir}/g.fsm"])
    source = rng.choice(["recovery.fsm", "orders.fsm", "refund.dt", "refund.policy", "orders.inv"])
    text = (ROOT / "models" / source).read_text(encoding="utf-8")
    if source.endswith(".inv"):
        text = (ROOT / "models" / "orders.fsm").read_text(encoding="utf-8") + "\n" + text
    name = "m" + Path(source).suffix
    return Input("dsl", {name: mutate(text, rng, rng.randint(1, 8)).encode("utf-8", "surrogatepass")},
                 ["check", "{dir}/" + name])


def jsonl(seed: int) -> Input:
    rng = random.Random(seed)
    lines = []
    for number in range(rng.randint(1, 12)):
        line = json.dumps(golden_case(rng, number), ensure_ascii=rng.random() < 0.5)
        if rng.random() < 0.3:
            line = mutate(line, rng, rng.randint(1, 4)).replace("\n", " ")
        lines.append(line)
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    if rng.random() < 0.15:  # a bad byte or a NUL in one line
        at = rng.randrange(len(data) + 1)
        data = data[:at] + rng.choice([b"\xff", b"\x00", b"\xc3"]) + data[at:]
    counted = sum(1 for line in data.split(b"\n") if line.strip(b" \t\r") and not line.strip().startswith(b"//")
                  and line.strip(b" \t\r") != b"\xef\xbb\xbf")
    # A file name is hostile too: spaces, a byte that is not UTF-8 (a lone surrogate to Python), an upper-case suffix.
    name = rng.choice(["g.jsonl", "g h.jsonl", os.fsdecode(b"caf\xe9.jsonl"), "G.JSONL", "\u202eg.jsonl"])
    return Input("goldens-jsonl", {name: data}, coverage(name), jsonl_cases=counted)


def coverage(name: str) -> list[str]:
    return ["coverage", "--model", str(MODEL), "--goldens", "{dir}/" + name, "--no-gate", "--format", "json"]


def yaml_goldens(seed: int) -> Input:
    import yaml

    rng = random.Random(seed)
    docs = [golden_case(rng, n) for n in range(rng.randint(1, 6))]
    text = yaml.safe_dump(docs, allow_unicode=True) if rng.random() < 0.5 else \
        "\n---\n".join(yaml.safe_dump(d, allow_unicode=True) for d in docs)
    if rng.random() < 0.6:
        text = mutate(text, rng, rng.randint(1, 5))
    return Input("goldens-yaml", {"g.yaml": text.encode("utf-8", "surrogatepass")}, coverage("g.yaml"))


def json_goldens(seed: int) -> Input:
    rng = random.Random(seed)
    text = json.dumps([golden_case(rng, n) for n in range(rng.randint(1, 6))], indent=rng.choice([None, 2]))
    if rng.random() < 0.5:
        text = mutate(text, rng, rng.randint(1, 4))
    return Input("goldens-json", {"g.json": text.encode("utf-8", "surrogatepass")}, coverage("g.json"))


CELLS = ["No.", "Question", "Expected answer", "Event", "Expected state", "Expected tool call", "Must not", "STT",
         "Câu hỏi", "", "", "", "1", "2", "I forgot my password", "my e-mail is lin@example.com", "yes",
         "tool_succeeded", "provide_email(email=a@b.c)", "start(", "state: x, y", "collecting_email", "=1+1",
         "\u2028", "a\nb", "9" * 400]


def sheet_rows(rng: random.Random) -> list[list[str]]:
    header = ["No.", "Question", "Expected answer"] + rng.sample(CELLS[3:9], rng.randint(0, 3))
    rows = [header] if rng.random() < 0.9 else []
    for _ in range(rng.randint(0, 10)):
        rows.append([rng.choice(CELLS) for _ in range(rng.randint(0, len(header) + 1))])
    return rows


def xlsx(seed: int) -> Input:
    import openpyxl

    rng = random.Random(seed)
    book = openpyxl.Workbook()
    for n in range(rng.randint(1, 2)):
        sheet = book.active if n == 0 else book.create_sheet(f"S{n}")
        for row in sheet_rows(rng):
            sheet.append(row)
        if rng.random() < 0.3 and sheet.max_row > 1:
            top = rng.randint(1, sheet.max_row)
            sheet.merge_cells(start_row=top, start_column=rng.randint(1, 2), end_row=min(top + 1, sheet.max_row),
                              end_column=rng.randint(2, 3))
    buffer = io.BytesIO()
    book.save(buffer)
    data = buffer.getvalue()
    if rng.random() < 0.1:
        data = data[: rng.randrange(len(data))]  # a truncated download
    return Input("goldens-xlsx", {"g.xlsx": data}, coverage("g.xlsx"))


def csv_goldens(seed: int) -> Input:
    rng = random.Random(seed)
    buffer = io.StringIO(newline="")
    csv.writer(buffer, delimiter=rng.choice([",", ";", "\t"])).writerows(sheet_rows(rng))
    text = buffer.getvalue()
    if rng.random() < 0.3:
        text = mutate(text, rng, rng.randint(1, 3))
    return Input("goldens-csv", {"g.csv": text.encode(rng.choice(["utf-8", "utf-8-sig", "utf-16"]), "surrogatepass")},
                 coverage("g.csv"))


def dmn(seed: int) -> Input:
    rng = random.Random(seed)
    source = rng.choice(["dish.dmn", "loans-dmn11.dmn", "partial.dmn"])
    text = (ROOT / "tests" / "data" / "dmn" / source).read_text(encoding="utf-8")
    return Input("dmn", {"d.dmn": mutate(text, rng, rng.randint(1, 6)).encode("utf-8", "surrogatepass")},
                 ["import", "dmn", "{dir}/d.dmn"])


def graphwalker(seed: int) -> Input:
    rng = random.Random(seed)
    text = (ROOT / "tests" / "data" / "graphwalker" / "login.json").read_text(encoding="utf-8")
    if rng.random() < 0.5:
        data = json.loads(text)
        for _ in range(rng.randint(1, 3)):
            model = rng.choice(data.get("models", [{}]) or [{}])
            model[rng.choice(["vertices", "edges", "name", "generator", "startElementId"])] = json_value(rng)
        text = json.dumps(data)
    else:
        text = mutate(text, rng, rng.randint(1, 6))
    return Input("graphwalker", {"gw.json": text.encode("utf-8", "surrogatepass")},
                 ["import", "graphwalker", "{dir}/gw.json"])


def output_path(seed: int) -> Input:
    rng = random.Random(seed)
    pieces = ["report", "x" * 300, "é" * 130, "missing/folder", "", ".", "..", "a b", "/dev/null", "sub",
              "r.json", "site", "\u202e", "测试"]
    target = "/".join(rng.choice(pieces) for _ in range(rng.randint(1, 2)))
    fmt = rng.choice(["json", "markdown", "sarif", "junit", "html", "text", "trace-csv"])
    shown = target if target.startswith("/dev/") else "{dir}/out/" + target
    args = ["coverage", "--model", str(MODEL), "--goldens", str(ROOT / "models" / "goldens" / "golden.jsonl"),
            "--no-gate", "--format", f"{fmt}:{shown}"]
    if rng.random() < 0.5:
        args += ["--format", f"json:{{dir}}/out/{rng.choice(pieces)}"]
    return Input("output-paths", {"out/sub/keep.txt": b"x"}, args)


# ---------------------------------------------------------------- observed runs (mbt runs)

ORDERS = ROOT / "models" / "orders.fsm"
RUN_SEEDS = {"otlp": ROOT / "models" / "runs" / "orders-traces.json",
             "spans": ROOT / "models" / "runs" / "orders-spans.jsonl",
             "transcript": ROOT / "models" / "runs" / "transcripts" / "chat-ORD-0031.json",
             "session": ROOT / "models" / "runs" / "transcripts" / "s_3107.json",
             "turns": ROOT / "models" / "runs" / "transcripts" / "turn-loop-s_4002.json",
             "stored-session": ROOT / "models" / "runs" / "transcripts" / "port-session-s_4001.json",
             "openllmetry": ROOT / "models" / "runs" / "openllmetry-traces.json",
             "span-events": ROOT / "models" / "runs" / "span-events-trace.json"}
BIGNUM = "<5000 digits>"
DEEP = {f"<deep {kind} {n}>": (opening * n) + '"x"' + (closing * n)
        for n in (50, 1200, 3000)
        for kind, opening, closing in (("list", "[", "]"), ("values", '{"values": [', "]}"),
                                       ("kvlist", '{"kvlistValue": {"values": [{"key": "k", "value": ', "}]}}"))}
RUN_KEYS = ["resourceSpans", "scopeSpans", "spans", "attributes", "key", "value", "stringValue", "intValue",
            "kvlistValue", "arrayValue", "values", "events", "traceId", "spanId", "name", "status", "code",
            "startTimeUnixNano", "endTimeUnixNano", "messages", "role", "content", "tool_calls", "function",
            "arguments", "tool_call_id", "session_id", "turns", "prompt", "output", "matched_tools",
            "permission_denials", "tool_name", "usage", "stop_reason", "precondition", "mbt_sources", "config"]


def hostile_value(rng: random.Random, depth: int = 0) -> object:
    """What hostile run files carry: wrong types, deep nesting, 5,000-digit numbers, lone surrogates, huge strings."""
    roll = rng.random()
    if roll < 0.08:  # nested past any recursion limit: written as text once dumped (DEEP), as json cannot
        return rng.choice(list(DEEP))
    if roll < 0.16:
        # BIGNUM becomes a bare 5,000-digit number once dumped (Python's json cannot write one itself)
        return rng.choice([BIGNUM, "9" * 5000, {"intValue": "9" * 5000}, -10 ** 400, 1e308 * 10])
    if roll < 0.24:
        return rng.choice(["\ud800", "\udfff\ud800", "x" * 200_000, "\u0000", "\u202e"])
    if depth > 3 or roll < 0.45:
        return rng.choice([None, True, False, 0, -1, 1.5, "", "x", "get_order", "SO-10031", [], {}, "{", "[1,"])
    if roll < 0.65:
        return [hostile_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(RUN_KEYS): hostile_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _replace_somewhere(doc: object, rng: random.Random) -> object:
    """`doc` with one value somewhere inside replaced by a hostile one (the whole document when nothing is inside)."""
    path = []
    node = doc
    while isinstance(node, (dict, list)) and node and rng.random() < 0.9:
        key = rng.choice(sorted(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
    if not path:
        return hostile_value(rng)
    parent, key = path[-1]
    parent[key] = hostile_value(rng)
    return doc


def run_file(seed: int) -> Input:
    """A shipped run artifact (an OTLP file, JSON Lines of spans, a transcript, a seed 003 session) with hostile
    values put inside it, truncated, or mutated as text."""
    rng = random.Random(seed)
    shape = rng.choice(sorted(RUN_SEEDS))
    source = RUN_SEEDS[shape]
    text = source.read_text(encoding="utf-8")
    suffix = source.suffix
    how = rng.random()
    if how < 0.55:
        if suffix == ".jsonl":
            lines = text.splitlines()
            k = rng.randrange(len(lines))
            lines[k] = json.dumps(_replace_somewhere(json.loads(lines[k]), rng), ensure_ascii=rng.random() < 0.7)
            text = "\n".join(lines)
        else:
            text = json.dumps(_replace_somewhere(json.loads(text), rng), ensure_ascii=rng.random() < 0.7)
    elif how < 0.7:
        text = text[:rng.randrange(len(text))]  # truncated
    else:
        text = mutate(text, rng, rng.randint(1, 6))
    text = text.replace(json.dumps(BIGNUM), "9" * 5000)
    for marker, nested in DEEP.items():
        text = text.replace(json.dumps(marker), nested)
    return Input(f"runs-{shape}", {f"r{suffix}": text.encode("utf-8", "surrogatepass")},
                 ["runs", "--model", str(ORDERS), "--runs", "{dir}/r" + suffix, "--no-gate", "--format", "json",
                  "--jobs", "1"])


FAMILIES = {"dsl": dsl, "goldens-jsonl": jsonl, "goldens-yaml": yaml_goldens, "goldens-json": json_goldens,
            "goldens-xlsx": xlsx, "goldens-csv": csv_goldens, "dmn": dmn, "graphwalker": graphwalker,
            "output-paths": output_path, "runs": run_file}

LOCATED = re.compile(r":\d+(:\d+)?: ")


@dataclass
class Outcome:
    code: int
    problems: list[str]  # what broke the contract (empty: it held)
    valid: int = 0  # golden cases read valid / invalid (coverage runs with a JSON report)
    invalid: int = 0


def judge(item: Input, folder: Path) -> Outcome:
    """Run one input in a fresh `folder` and check issue 14's contract on what happened."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name, data in item.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    before = {p for p in folder.rglob("*")}
    result = run_mbt(*[a.replace("{dir}", str(folder)) for a in item.args], cwd=folder)
    problems: list[str] = []
    valid = invalid = 0
    if result.returncode not in (0, 1, 2):
        problems.append(f"exit {result.returncode}: {result.stderr.strip()[:300]}")
    if "Traceback" in result.stderr:
        problems.append("a traceback on stderr")
    if result.returncode == 2:
        if not LOCATED.search(result.stderr) and not result.stderr.startswith("error: "):
            problems.append(f"exit 2 without a file:line message: {result.stderr.strip()[:300]}")
        if result.stdout:
            problems.append("exit 2 with output on stdout")
        if {p for p in folder.rglob("*")} - before:
            problems.append("exit 2 left files behind: " + ", ".join(sorted(str(p) for p in
                                                                             {p for p in folder.rglob("*")} - before)))
    left = [p for p in folder.rglob("*") if p.name.endswith(".tmp") or p.name.endswith(".old")]
    if left:
        problems.append(f"temporary files left: {left}")
    if item.args[0] == "coverage" and result.returncode == 0 and "--format" in item.args and \
            item.args[item.args.index("--format") + 1] == "json":
        try:
            goldens = json.loads(result.stdout)["goldens"]
        except (ValueError, KeyError) as err:
            problems.append(f"the JSON report does not parse: {err}")
        else:
            valid, invalid = goldens["valid"], goldens["invalid"]
            if goldens["read"] != goldens["valid"] + goldens["invalid"]:
                problems.append(f"read {goldens['read']} != valid {goldens['valid']} + invalid {goldens['invalid']}")
            if item.jsonl_cases is not None and goldens["read"] != item.jsonl_cases:
                problems.append(f"{item.jsonl_cases} non-empty lines but {goldens['read']} cases read")
    return Outcome(result.returncode, problems, valid, invalid)
