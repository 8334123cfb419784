"""`mbt check` behaviour as data (tests/cases/checks/*.yaml), plus the z3 encoding checked against compile_expr."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
import z3

from mbt.analysis import fsm_checks, invariant_checks, policy_checks, smt, spans, table_checks
from mbt.analysis.check import KIND_CHECKS, CheckOptions, check_model, has_errors, run_checks
from mbt.analysis.findings import CHECKS
from mbt.analysis.fsm_checks import FsmChecker
from mbt.analysis.smt import Solver, Symbols, encode, model_to_valuation, pin
from mbt.model.common import Location, ModelBase
from mbt.model.expr import And, Arith, Compare, EnumLit, Expr, Lit, Member, Not, Or, Ref, compile_expr
from mbt.model.fsm import Transition
from mbt.model.types import ValueType
from mbt.parsing.loader import load_file

CASES = Path(__file__).parent / "cases" / "checks"


def load_cases() -> list:
    out = []
    for path in sorted(CASES.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in data["cases"]:
            codes = case.get("codes", data.get("codes", "all"))
            out.append(pytest.param(case, codes, id=f"{path.stem}: {case['name']}"))
    return out


def write_case(tmp_path: Path, case: dict) -> Path:
    for name, text in (case.get("sources") or {}).items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("latin-1") if "\0" in text else text.encode("utf-8"))
    for name in case.get("folders", []):
        (tmp_path / name).mkdir(parents=True, exist_ok=True)
    model = tmp_path / case.get("file", "m.fsm")  # `file: m.dmn`: a model in another tool's format
    model.write_text(case["model"], encoding="utf-8")
    return model


def check_text(tmp_path: Path, text: str, sources: dict | None = None):
    path = write_case(tmp_path, {"model": text, "sources": sources})
    file = load_file(path)
    return file, run_checks([file])


@pytest.mark.parametrize("case, codes", load_cases())
def test_case(tmp_path, case, codes):
    path = write_case(tmp_path, case)
    findings = run_checks([load_file(path)], CheckOptions(**case.get("options", {})))
    got = sorted((f.code, f.location.line) for f in findings if codes == "all" or f.code in codes)
    expected = sorted((code, line) for code, line in case["expect"])
    assert got == expected, "\n".join(f.render() for f in findings)
    for f in findings:
        assert f.location.file == str(path)


def test_every_documented_code_has_a_case_and_every_code_is_documented():
    documented = set()
    for line in (Path(__file__).parents[1] / "docs" / "checks.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            documented.add(line.split()[1])
    in_cases = set()
    for path in CASES.glob("*.yaml"):
        for case in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]:
            in_cases.update(code for code, _ in case["expect"])
    assert all((fsm_checks, spans, invariant_checks, policy_checks, table_checks))  # imported: every check declared
    defined = set(CHECKS)  # the one registry of Check(code, name, severity, doc)
    assert defined == documented
    assert defined == in_cases
    for code, check in CHECKS.items():  # its name, severity and first sentence are docs/checks.md's
        heading = next(line for line in (Path(__file__).parents[1] / "docs" / "checks.md").read_text(
            encoding="utf-8").splitlines() if line.startswith(f"### {code} "))
        assert f"`{check.name}` ({check.severity}" in heading, (code, heading)
        assert check.doc and check.doc.endswith((".", ":", ")")), code


# ---------------------------------------------------------------- witnesses

def env_for(t: Transition, model, witness: dict) -> dict:
    """The witness as the transition's guard sees it: parameters under the transition's local names."""
    event = model.events[t.event]
    names = t.params or [p.name for p in event.params]
    env = {k: v for k, v in witness.items() if k not in {p.name for p in event.params}}
    for local, p in zip(names, event.params):
        if p.name in witness:
            env[local] = witness[p.name]
    return env


OVERLAPS = """\
fsm m {
  var n: int[0..3] = 0
  var email: string? = none
  var mode: enum{a, b, c}? = none
  state s initial
  state t final
  event go(x: int[0..9], y: int[0..9], text: string)
  s -> t on go(y, x) [y > 5 and n < 2 and mode != none]
  s -> s on go [x > 7 and email != text and mode in {b, c}]
  s -> t on go(p, q, r) [r != "" and r != "x" and q == p + 1 and email == none]
}
"""


@pytest.mark.parametrize("solver_only", [False, True], ids=["candidates first", "z3 only"])
def test_overlap_witnesses_make_both_guards_true(tmp_path, monkeypatch, solver_only):
    if solver_only:  # every query goes to z3, so its witnesses are the ones checked here
        monkeypatch.setattr(fsm_checks, "search", lambda *a, **k: None)
    file, findings = check_text(tmp_path, OVERLAPS)
    model = file.models[0]
    by_line = {t.loc.line: t for t in model.transitions}
    overlaps = [f for f in findings if f.code == "FSM006"]
    assert len(overlaps) == 3
    for f in overlaps:
        assert f.witness is not None and "did not replay" not in f.message
        pair = [by_line[f.location.line], by_line[f.related[0].line]]
        for t in pair:
            assert compile_expr(t.guard)(env_for(t, model, f.witness)) is True, (f.render(), t.label())
        for name, value in f.witness.items():
            vtype = model.variables[name].type if name in model.variables else model.events["go"].param(name).type
            assert vtype.admits(value)


def test_forbid_witness_replays_the_actions(tmp_path, monkeypatch):
    monkeypatch.setattr(fsm_checks, "search", lambda *a, **k: None)
    text = """\
fsm m {
  var email: string? = none
  var n: int[0..3] = 0
  state a initial
  state b final
  event correct(e: string)
  a -> b on correct(addr) [addr != "" and n < 2] / discard email, n := n + 2, call reset(to = discarded.email, k = n)
  forbid any on * effect call reset [args.to != none and args.k == 3]
}
"""
    file, findings = check_text(tmp_path, text)
    (f,) = [f for f in findings if f.code == "FSM007"]
    assert f.related[0].line == 8
    # email was set before and n was 1: the call sends the old address with k = 3.
    assert f.witness["n"] == 1 and f.witness["email"] is not None
    assert f.witness["e"] != ""


def test_a_witness_that_does_not_replay_is_never_shown(tmp_path, monkeypatch):
    # Sabotage the encoding (every condition becomes `true`): z3's witness no longer satisfies the real guards,
    # and re-evaluation on compile_expr must catch it instead of reporting a wrong witness.
    monkeypatch.setattr(fsm_checks, "search", lambda *a, **k: None)
    monkeypatch.setattr(fsm_checks, "encode_term", lambda expr, symbols: smt.literal(True))
    text = """\
fsm m {
  var n: int[0..3] = 0
  state a initial
  state b final
  event go
  a -> b on go [n == 3]
  a -> a on go [n == 2]
}
"""
    _, findings = check_text(tmp_path, text)
    (f,) = [f for f in findings if f.code == "FSM006"]
    assert f.witness is None
    assert "did not replay" in f.message


def test_candidate_search_settles_easy_guards_and_the_solver_the_rest(tmp_path):
    easy = "\n".join(line for line in OVERLAPS.splitlines() if "on go(p, q, r)" not in line) + "\n"
    path = tmp_path / "easy.fsm"
    path.write_text(easy, encoding="utf-8")
    checker = FsmChecker(load_file(path).models[0])
    assert [f.code for f in checker.run()] == ["FSM006"]
    assert checker.solver.queries == 0  # the bounds and written constants were enough
    # The third guard excludes the candidate strings and needs q == p + 1: the solver has to find it.
    path.write_text(OVERLAPS, encoding="utf-8")
    checker = FsmChecker(load_file(path).models[0])
    assert [f.code for f in checker.run()].count("FSM006") == 3
    assert checker.solver.queries > 0


def test_guard_results_are_cached_by_canonical_text(tmp_path):
    lines = ["fsm m {", "  var n: int[0..9] = 0", "  state s0 initial", "  state s9 final", "  event go(k: int[0..9])"]
    lines += [f"  state s{i}" for i in range(1, 9)]
    lines += [f"  s{i} -> s{i + 1} on go [n > 20]" for i in range(9)]
    lines += [f"  s{i} -> s{i + 1} on go(x) [x > 20]" for i in range(9)]
    lines += ["}"]
    path = tmp_path / "m.fsm"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    checker = FsmChecker(load_file(path).models[0])
    findings = checker.run()
    assert sum(f.code == "FSM005" for f in findings) == 18
    # `n > 20` and `x > 20` (x being go's k in every transition) are two formulas: two solver calls.
    assert checker.solver.queries == 2


# ---------------------------------------------------------------- run_checks

def test_findings_are_sorted_and_errors_detected(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.fsm").write_text(
        "fsm z {\n  state a initial\n  state b final\n  event go\n  a -> b on go\n  a -> a on go\n}\n", encoding="utf-8")
    (tmp_path / "a.fsm").write_text(
        "fsm y {\n  state a initial\n  state c\n  event go\n  event x\n  a -> c on go\n}\n", encoding="utf-8")
    findings = run_checks([load_file(tmp_path / "b" / "z.fsm"), load_file(tmp_path / "a.fsm")])
    keys = [(f.location.file, f.location.line, f.location.column, f.code) for f in findings]
    assert keys == sorted(keys)
    assert [f.code for f in findings] == ["FSM004", "FSM003", "FSM009", "FSM006"]
    assert has_errors(findings)
    assert not has_errors(findings[:3])


def test_kinds_without_checks_yield_no_findings():
    loc = Location(file="x.dt", line=1, column=1)
    assert "fsm" in KIND_CHECKS
    assert check_model(ModelBase(kind="no-such-kind", name="t", file="x.dt", loc=loc)) == []


def test_finding_render_shows_witness_and_related(tmp_path):
    _, findings = check_text(tmp_path, "fsm m {\n  var e: string? = none\n  state a initial\n  state b final\n"
                                       "  event go\n  a -> b on go [e == none]\n  a -> a on go\n}\n")
    (f,) = findings
    text = f.render()
    assert text.startswith(f"{tmp_path / 'm.fsm'}:7:3: error: guards overlap on `go` in state `a`")
    assert f"see {tmp_path / 'm.fsm'}:6:3" in text
    assert "witness: e = none" in text


# ---------------------------------------------------------------- the encoding agrees with compile_expr

SCOPE = {
    "b": ValueType("bool", optional=True),
    "c": ValueType("bool"),
    "n": ValueType("int", lo=-2, hi=3, optional=True),
    "m": ValueType("int", lo=0, hi=2),
    "s": ValueType("string", optional=True),
    "e": ValueType("enum", values=("A", "B", "C"), optional=True),
    "f": ValueType("enum", values=("B", "D")),
}
STRINGS = ["", "x", "当前 \\u{41}", 'q"\\']


def random_value(rng: random.Random, vtype: ValueType):
    if vtype.optional and rng.random() < 0.25:
        return None
    if vtype.kind == "bool":
        return rng.random() < 0.5
    if vtype.kind == "int":
        return rng.randint(vtype.lo, vtype.hi)
    if vtype.kind == "enum":
        return rng.choice(vtype.values)
    return rng.choice(STRINGS)


def operand(rng: random.Random, kind: str) -> Expr:
    names = [n for n, t in SCOPE.items() if t.kind == kind]
    if kind == "int":
        if rng.random() < 0.3:
            return Arith(rng.choice("+-"), operand(rng, "int"), operand(rng, "int"))
        return Ref(rng.choice(names)) if rng.random() < 0.6 else Lit(rng.randint(-3, 4))
    if kind == "enum":
        return Ref(rng.choice(names)) if rng.random() < 0.6 else EnumLit(rng.choice("ABCD"))
    if kind == "string":
        return Ref("s") if rng.random() < 0.6 else Lit(rng.choice(STRINGS))
    return Ref(rng.choice(names)) if rng.random() < 0.6 else Lit(rng.random() < 0.5)


def condition(rng: random.Random, depth: int = 0) -> Expr:
    roll = rng.random()
    if depth < 3 and roll < 0.3:
        items = tuple(condition(rng, depth + 1) for _ in range(rng.randint(2, 3)))
        return And(items) if rng.random() < 0.5 else Or(items)
    if depth < 3 and roll < 0.4:
        return Not(condition(rng, depth + 1))
    kind = rng.choice(["int", "enum", "string", "bool"])
    if roll < 0.55:
        left = operand(rng, kind)
        items = [operand(rng, kind) for _ in range(rng.randint(1, 3))]
        items = [i for i in items if isinstance(i, (Lit, EnumLit))] or [Lit(None)]
        if rng.random() < 0.2:
            items.append(Lit(None))
        return Member(left, tuple(items), rng.random() < 0.5)
    if kind == "bool" and roll < 0.65:
        return Ref(rng.choice(["b", "c"]))
    ops = ["==", "!="] + (["<", "<=", ">", ">="] if kind == "int" else [])
    right = Lit(None) if rng.random() < 0.1 else operand(rng, kind)
    return Compare(rng.choice(ops), operand(rng, kind), right)


def test_encoding_agrees_with_compile_expr_on_random_expressions():
    rng = random.Random(7)
    symbols = Symbols(SCOPE)
    solver = z3.Solver()
    for _ in range(400):
        expr = condition(rng)
        fn = compile_expr(expr)
        formula = encode(expr, symbols)
        for _ in range(4):
            valuation = {name: random_value(rng, t) for name, t in SCOPE.items()}
            expected = bool(fn(valuation))
            solver.push()
            solver.add(*pin(symbols, valuation), formula)
            got = solver.check() == z3.sat
            solver.pop()
            assert got == expected, (expr.text(), valuation)


def test_solver_witnesses_satisfy_compile_expr_on_random_expressions():
    rng = random.Random(11)
    symbols = Symbols(SCOPE)
    solver = Solver()
    satisfiable = 0
    for _ in range(300):
        expr = condition(rng)
        term = smt.encode_term(expr, symbols)
        outcome = solver.check([term], symbols, want_model=True)
        assert outcome.status in ("sat", "unsat")
        if outcome.sat:
            satisfiable += 1
            valuation = model_to_valuation(outcome.model, symbols)
            assert all(SCOPE[n].admits(v) for n, v in valuation.items()), valuation
            assert compile_expr(expr)(valuation), (expr.text(), valuation)
        else:  # no valuation may satisfy it: try a few hundred
            fn = compile_expr(expr)
            for _ in range(200):
                assert not fn({n: random_value(rng, t) for n, t in SCOPE.items()}), expr.text()
    assert satisfiable > 100


def test_strings_round_trip_exactly():
    symbols = Symbols({"s": ValueType("string")})
    solver = Solver()
    for text in STRINGS + ["😀 é\n\t", "\\u{5c}"]:
        outcome = solver.check([smt.boolean(symbols["s"].value == smt.string_val(text), frozenset(["s"]))],
                               symbols, want_model=True)
        assert model_to_valuation(outcome.model, symbols) == {"s": text}


def test_solver_pops_each_query_and_caches_by_key():
    symbols = Symbols({"n": ValueType("int", lo=0, hi=3)})
    solver = Solver()
    above = smt.encode_term(Compare(">", Ref("n"), Lit(2)), symbols)
    below = smt.encode_term(Compare("<", Ref("n"), Lit(1)), symbols)
    beyond = smt.encode_term(Compare(">", Ref("n"), Lit(3)), symbols)
    assert solver.check([above], symbols, key="above").sat
    assert solver.check([below], symbols).sat  # not affected by the previous query
    assert solver.check([above, below], symbols).unsat
    assert solver.check([beyond], symbols).unsat  # the domain int[0..3] is asserted
    queries = solver.queries
    assert solver.check([above], symbols, key="above").sat
    assert solver.queries == queries
    # A cached answer without a model is recomputed when a model is wanted.
    outcome = solver.check([above], symbols, key="above", want_model=True)
    assert model_to_valuation(outcome.model, symbols) == {"n": 3}


def test_views_rename_and_override():
    symbols = Symbols({"go:x": ValueType("int", lo=0, hi=9), "n": ValueType("int", lo=0, hi=9, optional=True)})
    view = symbols.view({"k": "go:x"}, {"n": smt.NONE})
    expr = And((Compare("==", Ref("k"), Lit(4)), Compare("==", Ref("n"), Lit(None))))
    outcome = Solver().check([smt.encode_term(expr, view)], symbols, want_model=True)
    assert model_to_valuation(outcome.model, symbols, ["go:x"]) == {"go:x": 4}
    assert smt.encode_term(Ref("missing"), view) is smt.NONE
