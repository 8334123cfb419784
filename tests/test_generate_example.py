"""The shipped example: generated/ is up to date and deterministic; every generated test passes on the reference
machine and fails on mutants of it (a transition retargeted, a guard negated, a forbidden transition allowed)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mbt import api
from mbt.generate.adapter import ReferenceAdapter
from mbt.generate.support import Driver
from mbt.goldens.loader import load_goldens
from mbt.model.expr import Lit, Not
from mbt.model.fsm import FsmModel, Transition
from mbt.parsing.loader import load_file

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
# The exact commands of README.md and generated/README.md (the top-level golden files of the example).
GOLDENS = [f"models/goldens/{name}" for name in ("broken.jsonl", "golden.jsonl", "multi-turn.yaml",
                                                  "recovery-flows.yaml", "single-turn.jsonl", "tool-failures.jsonl")]


def regenerate(root: Path) -> None:
    """Run the commands that made generated/, in a copy of the repository's models."""
    shutil.copytree(ROOT / "models", root / "models")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        api.generate(["models/recovery.fsm"], GOLDENS, "generated")
        api.generate(["models/recovery.fsm"], [], "generated", suite="transition")
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("example")
    regenerate(root)
    return root / "generated"


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and p.name != "README.md"}


def test_generated_folder_is_up_to_date(fresh: Path):
    committed, made = files(GENERATED), files(fresh)
    assert sorted(committed) == sorted(made), "regenerate generated/ with the commands in generated/README.md"
    stale = [name for name in made if committed[name] != made[name]]
    assert not stale, f"generated/ is stale ({stale}): rerun the commands in generated/README.md"


def test_the_same_inputs_give_byte_identical_files(fresh: Path):
    root = fresh.parent
    cwd = os.getcwd()
    os.chdir(root)
    try:
        again = api.generate(["models/recovery.fsm"], GOLDENS, "generated")
        suite = api.generate(["models/recovery.fsm"], [], "generated", suite="transition")
    finally:
        os.chdir(cwd)
    assert {f.status for f in again.files + suite.files} == {"unchanged"}


def load_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"gen_{path.stem}_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def generated_tests(module) -> dict:
    return {name: fn for name, fn in vars(module).items() if name.startswith("test_")}


def fails(test, model: FsmModel) -> bool:
    try:
        test(Driver(ReferenceAdapter(model)))
    except AssertionError:
        return True
    return False


@pytest.fixture(scope="module")
def example() -> FsmModel:
    return load_file(ROOT / "models" / "recovery.fsm").models[0]


@pytest.fixture(scope="module")
def every_element(tmp_path_factory, example) -> tuple[Path, object]:
    """Tests for every element of the example (no goldens: everything is a gap)."""
    out = tmp_path_factory.mktemp("all")
    report = api.generate([str(ROOT / "models" / "recovery.fsm")], [], str(out))
    return load_module(out / "tests" / "test_recovery_gaps.py"), report


# ---------------------------------------------------------------- mutants


def retargeted(model: FsmModel, index: int) -> FsmModel:
    mutant = model.model_copy(deep=True)
    t = mutant.transitions[index]
    t.target = next(s for s in mutant.states if s != t.target and not mutant.states[s].initial)
    return mutant


def negated(model: FsmModel, index: int) -> FsmModel:
    mutant = model.model_copy(deep=True)
    t = mutant.transitions[index]
    t.guard = Not(t.guard) if t.guard is not None else Lit(False)
    return mutant


def allowed(model: FsmModel, key: str) -> FsmModel:
    """The forbidden behaviour made possible: a forbidden move added; a forbidden call's guards dropped."""
    mutant = model.model_copy(deep=True)
    f = next(f for f in mutant.forbids if f.key == key)
    if f.effect is not None and f.effect.kind == "call":
        for t in mutant.transitions:
            if any(getattr(a, "tool", None) == f.effect.tool for a in t.actions):
                t.guard = None
    else:
        target = f.target or next(s for s in mutant.states if s != f.source and not mutant.states[s].initial)
        mutant.transitions.insert(0, Transition(source=f.source, target=target, event=f.event, loc=f.loc, key="mutant"))
    return mutant


class SaysEverything(ReferenceAdapter):
    """A mutant system that says the forbidden phrases of `say` effects."""

    def __init__(self, model: FsmModel, phrases: list[str]):
        super().__init__(model)
        self.phrases = phrases

    def observe(self):
        seen = super().observe()
        seen["outputs"] = list(self.phrases)
        return seen


def mutants_for(element: str, model: FsmModel) -> list:
    """The mutants that change what `element` is about."""
    keys = {t.key: i for i, t in enumerate(model.transitions)}
    kind, _, rest = element.partition(":")
    if kind == "transition":
        return [retargeted(model, keys[rest]), negated(model, keys[rest])]
    if kind == "guard":
        # A guard element is about its (state, event) group: which branch fires depends on every guard of it.
        key = rest.split(":")[0]
        t = model.transitions[keys[key]] if key in keys else None
        source, event = (t.source, t.event) if t is not None else key.split(".")
        group = [i for i, u in enumerate(model.transitions) if (u.source, u.event) == (source, event)]
        return [m for i in group for m in (retargeted(model, i), negated(model, i))]
    if kind == "transition-pair":
        second = keys[rest.split("|")[1]]
        return [retargeted(model, second), negated(model, second)]
    if kind == "state":
        return [retargeted(model, i) for i, t in enumerate(model.transitions) if t.target == rest] + \
               [negated(model, i) for i, t in enumerate(model.transitions) if t.source == rest]
    if kind == "forbidden":
        f = next(f for f in model.forbids if f.key == rest)
        if f.effect is not None and f.effect.kind == "say":
            return [("says", f.effect.matching)]
        return [allowed(model, rest)]
    raise AssertionError(element)


def killed(test, mutant, model: FsmModel) -> bool:
    if isinstance(mutant, tuple):  # a system that says what it must not
        try:
            test(Driver(SaysEverything(model, list(mutant[1]))))
        except AssertionError:
            return True
        return False
    return fails(test, mutant)


def test_every_generated_gap_test_passes_on_the_model_and_fails_on_its_mutants(example):
    module = load_module(GENERATED / "tests" / "test_recovery_gaps.py")
    report_elements = {name: fn.__doc__.split()[1] for name, fn in generated_tests(module).items()}
    assert len(report_elements) == 30
    for name, test in generated_tests(module).items():
        assert not fails(test, example), f"{name} fails on the model it was generated from"
        mutants = mutants_for(report_elements[name], example)
        assert any(killed(test, m, example) for m in mutants), f"{name} does not notice its element's mutants"


def test_every_element_test_passes_and_kills_its_mutants(every_element, example):
    module, report = every_element
    by_name = {t.name: t.elements[0] for t in report.models[0].tests}
    assert len(by_name) + len(report.models[0].missing) == len(api.elements([str(ROOT / "models" / "recovery.fsm")])
                                                                 .models[0].elements)
    for name, test in generated_tests(module).items():
        assert not fails(test, example), name
        assert any(killed(test, m, example) for m in mutants_for(by_name[name], example)), name


def test_the_whole_generated_suite_kills_every_mutant_of_the_example(every_element, example):
    module, _ = every_element
    tests = list(generated_tests(module).values())
    mutants = [(f"retarget {t.key}", retargeted(example, i)) for i, t in enumerate(example.transitions)]
    mutants += [(f"negate {t.key}", negated(example, i)) for i, t in enumerate(example.transitions)]
    mutants += [(f"allow {f.key}", allowed(example, f.key)) for f in example.forbids
                if f.effect is None or f.effect.kind == "call"]
    survivors = [name for name, mutant in mutants if not any(fails(test, mutant) for test in tests)]
    assert not survivors


def test_the_transition_suite_kills_every_retargeted_or_negated_transition(example):
    module = load_module(GENERATED / "tests" / "test_recovery_suite_transition.py")
    tests = list(generated_tests(module).values())
    assert all(not fails(test, example) for test in tests)
    for i, t in enumerate(example.transitions):
        for mutant in (retargeted(example, i), negated(example, i)):
            assert any(fails(test, mutant) for test in tests), t.key


# ---------------------------------------------------------------- the stubs and the generated pytest run


def test_the_stubs_verify_the_elements_they_were_made_for(example):
    original = load_goldens([str(ROOT / g) for g in GOLDENS])
    stubs = load_goldens([str(GENERATED / "goldens" / "recovery.gaps.jsonl")])
    assert not stubs.invalid
    merged = load_goldens([str(ROOT / g) for g in GOLDENS] + [str(GENERATED / "goldens" / "recovery.gaps.jsonl")])
    before = {e.element.id for e in api.measure([example], original).models[0].uncovered()}
    after = {e.element.id for e in api.measure([example], merged).models[0].uncovered()}
    made_for = {case.model_extra["element"] for case in stubs.cases}
    assert made_for <= before and not (made_for & after)
    summary = (GENERATED / "summary.gaps.txt").read_text(encoding="utf-8")
    for element in after:  # what stays uncovered is listed with the reason
        assert element in summary


def test_the_generated_pytest_modules_run_with_the_reference_adapter(tmp_path: Path):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "models", copy / "models")
    shutil.copytree(GENERATED, copy / "generated", ignore=shutil.ignore_patterns("__pycache__"))
    # The generated tests need no pytest plugin; not loading the installed ones (hypothesis, mbt's own) halves start-up.
    env = {**os.environ, "MBT_ADAPTER": "reference", "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "generated/tests"]
    result = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "33 passed" in result.stdout
    env.pop("MBT_ADAPTER")
    result = subprocess.run([*command, "-x"], cwd=copy, env=env, capture_output=True, text=True)  # one failure shows it
    assert result.returncode == 1 and "set MBT_ADAPTER=package.module:factory" in result.stdout
