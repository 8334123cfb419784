"""`mbt generate --kill`: for every surviving mutant with a witness, the golden stub and pytest test that kill it.

An FSM witness becomes a skeleton like a gap's (mbt/generate/skeleton.py): the stub is replayed on the model, the test
is run on the reference machine of the model (it must pass) and of the mutant (it must fail), and the stub is
replayed on the mutant (it must be contradicted); a test that does not do all of that is not written. A table or
policy witness is a decision or request case checked the same way by replay.
"""

from __future__ import annotations

from typing import Any

from mbt.elements.fsm import state_id
from mbt.generate.adapter import ReferenceAdapter
from mbt.generate.files import OutputFile
from mbt.generate.generation import DecisionGeneration, FsmGeneration, GenerateOptions, finish, model_files
from mbt.generate.report import GeneratedTest, GenerateReport, MissingWitness, ModelGeneration
from mbt.generate.skeleton import test_name
from mbt.generate.support import driver_class
from mbt.generate.writers import DriverCall, GeneratedFunction
from mbt.goldens.cases import parse_case
from mbt.goldens.loader import GoldenSet
from mbt.kind import Replayer, support
from mbt.measure.mutation import MutantResult
from mbt.model.common import ModelBase
from mbt.mutate.engine import MutationRun, killed, mutation_run
from mbt.mutate.mutant import Mutant


def generate_kill(models: list[ModelBase], goldens: GoldenSet, out: str, options: GenerateOptions) -> GenerateReport:
    """The tests for the surviving mutants of the goldens on the models, written under `out`."""
    results, files, run = kill_generation(models, goldens, out, options)
    measured = None if run.goldens is None else (run.goldens, run.report.invalid_cases)
    return finish(out, "kill", results, files, options, measured)


def kill_generation(models: list[ModelBase], goldens: GoldenSet, out: str, options: GenerateOptions
                    ) -> tuple[list[ModelGeneration], list[OutputFile], MutationRun]:
    """(ModelGeneration per model, files, the mutation run) for the surviving mutants of the goldens on the models."""

    run = mutation_run(models, goldens)
    options.models = list(models)
    results: list[ModelGeneration] = []
    files: list[OutputFile] = []
    for model, mm in zip(models, run.report.models):
        survivors = [r for r in mm.results if r.status == "survived"]
        result = ModelGeneration(model=model.name, kind=model.kind, file=model.file, mode="kill",
                                 uncovered=len(survivors), note=mm.note)
        kind = support(model.kind)
        if kind.mutation is None or kind.replayer is None or not survivors:
            results.append(result)
            continue
        base = kind.replayer(model, kind.elements(model))
        by_id = {m.id: m for m in kind.mutation.mutants(model)}
        tests: list[GeneratedFunction] = []
        stubs: list[dict[str, Any]] = []
        names: set[str] = set()
        # The kind's own generator (KindSupport.generation): an FSM's builds and checks skeletons, a table's or a
        # policy's knows the driver call that checks a decision.
        made = kind.generation(model, options, out) if kind.generation is not None else None
        gen = made if isinstance(made, FsmGeneration) else None
        decisions = made if isinstance(made, DecisionGeneration) else None
        for r in survivors:
            mutant = by_id[r.id]
            replayer = kind.mutation.replayer(base, mutant)
            if r.witness is None:
                result.missing.append(_missing(r, "unknown", r.reason))
                continue
            if gen is not None:
                w = r.witness
                events = [(t["event"], dict(t.get("args", {}))) for t in w["turns"]]
                # The element the stub is checked to verify is the state the witness step starts in (a refusal
                # verifies no transition, yet kills a boundary shifted the other way); the stub then names the
                # element the mutant touches, and the mutant.
                start = state_id(w["precondition"].get("state", gen.model.initial_state))
                refused = gen.add(test_name(r.id, gen.names), w["id"], [start], w["precondition"], events, None, [],
                                  None)
                problem = refused[1] if refused is not None else _fsm_kills(gen, base, replayer, mutant)
                if problem is not None:
                    result.missing.append(_missing(r, "replay", problem))
                    continue
                gen.stubs[-1].update(element=r.element, mutant=r.id)
                run_line = gen.docs[gen.skeletons[-1].name].splitlines()[-1]
                gen.docs[gen.skeletons[-1].name] = (f"Kills mutant {r.id} ({r.at}): {r.description}.\n\n"
                                                    f"Element: {r.element}\n{r.reason}\n{run_line}")
                summary = gen.summary(gen.skeletons[-1])
                summary.elements = [r.element]
                result.tests.append(summary)
                continue
            if decisions is None:
                result.missing.append(_missing(r, "unknown", f"mbt writes no kill tests for {model.kind} models"))
                continue
            stub = dict(r.witness, mutant=r.id, element=r.element)
            case = parse_case(stub, "kill", 1)
            first = base.replay(case)
            if first.invalid or killed(first) or not killed(replayer.replay(case)):
                result.missing.append(_missing(r, "replay", "the witness does not tell the mutant apart by replay"))
                continue
            call = decisions.witnesses.call(stub)
            problem = _decision_test_problem(call, model, mutant.model)
            if problem is not None:
                result.missing.append(_missing(r, "replay", problem))
                continue
            name = test_name(r.id, names)
            tests.append({"name": name, "doc": f"Kills mutant {r.id} ({r.at}): {r.description}.\n\n{r.reason}",
                          "calls": [call]})
            stubs.append(stub)
            result.tests.append(GeneratedTest(name=name, case_id=stub["id"], elements=[r.element], steps=1,
                                              events=[f"{call['method']}({call['args'][0]!r}, {call['args'][1]!r})"]))
        files += gen.files("kill") if gen is not None else (model_files(model, out, "kill", tests, stubs)
                                                            if stubs else [])
        results.append(result)
    return results, files, run


def _fsm_kills(gen: FsmGeneration, base: Replayer, replayer: Replayer, mutant: Mutant) -> str | None:
    """The kept skeleton's stub must be contradicted on the mutant and its test fail on the mutant's reference
    machine; otherwise it is taken back."""
    sk, stub = gen.skeletons[-1], gen.stubs[-1]
    case = parse_case(stub, "kill", 1)
    problem = None
    if not killed(replayer.replay(case)):
        problem = "the generated golden is not contradicted on the mutant"
    elif gen.builder.check_test(sk, ReferenceAdapter(mutant.model)) is None:
        problem = "the generated test passes on the mutant's reference machine"
    if problem is not None:
        gen.skeletons.pop()
        gen.stubs.pop()
        gen.docs.pop(sk.name, None)
    return problem


def _decision_test_problem(call: DriverCall, model: ModelBase, mutated: ModelBase) -> str | None:
    """The test's call must pass on the model's reference adapter and fail on the mutant's."""
    driver = driver_class()  # the conversation's and every kind's methods (KindSupport.driver)

    def fails(on: ModelBase) -> str | None:
        try:
            getattr(driver(ReferenceAdapter(on)), call["method"])(*call["args"], **dict(call["kwargs"]))
        except AssertionError as err:
            return str(err)
        return None

    problem = fails(model)
    if problem is not None:
        return f"the generated test fails on the model's reference adapter: {problem}"
    if fails(mutated) is None:
        return "the generated test passes on the mutant's reference adapter"
    return None


def _missing(r: MutantResult, reason: str, message: str) -> MissingWitness:
    return MissingWitness(element=r.element, criterion="mutation", reason=reason, message=f"{r.id}: {message}",
                          location=r.at)
