"""Goldens and recorded runs into judged answer cases (`mbt eval`).

Goldens: seed 001 sheets (.xlsx/.csv) and mbt's JSONL/YAML/JSON. A case's id is local to its file and sheet (seed
001 numbers each suite 1..n), so the same id in two files is two cases; only a repeat within one file or sheet is
invalid. A turn is judged when it has an expected answer (`expected_answer`: text or a list of texts), rule
assertions (`assert`) or `must_have` / `must_not` phrases; a case with none of them is invalid at its `file:row`.

Matching a run to a case (the first rule that names a case wins):
1. the transcript's `case_id` (or `metadata.case_id`);
2. the run file's name without its suffix, when the file holds one run (`runs/answers/3.json` answers case `3`);
3. the run's conversation id (`conversation_id`, else its session or trace id).
A name is a case's id, or `STEM/ID` with the golden file's name without suffix (`answers/3`; a sheet of a
workbook: `book[Sheet]/3`), which is needed when several golden files hold the id: a bare id that names several
cases matches none, and the run is listed as without a case, with why. A case with no run is `not_judged`
("no answer recorded"); a second run for a case already answered is listed, not judged.

A case's turns are paired with the run's exchanges in order: an exchange starts at each user message and its answer
is the assistant text up to the next user message (a run with no user message is one exchange).

Contracts (seed 000, docs/contracts.md): a case naming `contract: ID` whose contract is among the loaded contracts
(`--model`) has its last answer (the answer to its last turn) judged on every must_have / must_not item of the
contract (mbt.judges.contract), reported as `contract` with the hard gate and each item's verdict; the contract's
`soft_rubric` items are criteria judged on that answer and reported beside the gate (`gating: false`, never counted in
the overall verdict). Such a case needs no check of its own. Its overall verdict is the worst of its criteria's
overall verdict and the contract's hard gate (fail, then error, then not judged): a violated must_not fails it, an
item not judged keeps it from passing. A case naming a contract no `--model` gives is a note, never dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mbt.answers.gate import answers_gate
from mbt.answers.jobs import in_parts
from mbt.answers.results import (
    CaseResult,
    ContractItemResult,
    ContractResult,
    CriterionSummary,
    CriterionVerdict,
    EvalGate,
    EvalReport,
    Located,
    ModelSayings,
    ModelVerdict,
    OverallVerdict,
    TurnAnswer,
)
from mbt.errors import LocatedError, Problem
from mbt.goldens.cases import GoldenCase
from mbt.goldens.loader import GOLDEN_SUFFIXES, GoldenStream
from mbt.judges import (
    AnswerCase,
    Assertion,
    CriteriaConfig,
    Judge,
    JudgeInput,
    Verdict,
    VerdictValue,
    contract_phrases,
    judge_cases,
    overall_verdict,
    parse_assertions,
)
from mbt.judges.assertions import forbidden_said
from mbt.judges.contract import ContractVerdict, judge_answers, soft_criteria
from mbt.measure.gate import Gate
from mbt.model.contract import ContractModel
from mbt.runs.reader import read_runs
from mbt.runs.steps import ObservedRun

NO_JUDGE = "none"  # the judge named by a verdict that no judge gave (no answer to judge)


@dataclass
class AnswerTurn:
    question: str
    expected: tuple[str, ...]
    assertions: tuple[Assertion, ...]

    @property
    def checked(self) -> bool:
        return bool(self.expected or self.assertions)


@dataclass
class AnswerGolden:
    case: GoldenCase
    turns: list[AnswerTurn]
    run: ObservedRun | None = None
    matched_by: str | None = None

    @property
    def scope(self) -> str:
        """The golden file's name without suffix, and its sheet: what qualifies an id (`answers/3`)."""
        found = re.fullmatch(r"(.*?)(\[[^\]]*\])?", self.case.file)
        base, sheet = (found.group(1), found.group(2) or "") if found else (self.case.file, "")
        return Path(base).stem + sheet


@dataclass
class Goldens:
    cases: list[AnswerGolden] = field(default_factory=list)
    invalid: list[Located] = field(default_factory=list)


def _texts(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    return tuple(str(v).strip() for v in items if v is not None and str(v).strip())


def _turns(case: GoldenCase) -> list[AnswerTurn]:
    out = []
    for index, turn in enumerate(case.turns):
        specs = turn.extra.get("assert")
        listed = [] if specs is None else specs if isinstance(specs, list) else [specs]
        assertions = parse_assertions(listed, path=case.file, line=case.line)
        expect = turn.expect
        must_have, must_not = list(expect.must_have), list(expect.must_not)
        if index == len(case.turns) - 1:  # the case's final assertions speak of its last answer
            must_have += case.final.must_have
            must_not += case.final.must_not
        assertions += contract_phrases(must_have=must_have, must_not=must_not, path=case.file, line=case.line)
        out.append(AnswerTurn(turn.user or "", _texts(turn.extra.get("expected_answer")), tuple(assertions)))
    return out


def load_answer_goldens(paths: list[str], contracts: Collection[str] = ()) -> Goldens:
    """Every case of the golden files with what its turns expect; ids are local to their file and sheet. A case
    naming one of `contracts` is checked by it, and needs no check of its own."""
    stream = GoldenStream(paths)
    if stream.empty_folders:  # a folder without a golden file is a wrong path, not an empty suite
        raise LocatedError([Problem(folder, 1, 1, f"no golden file in this folder (mbt eval reads "
                                    f"{', '.join(GOLDEN_SUFFIXES)})") for folder in stream.empty_folders])
    out = Goldens()
    first: dict[tuple[str, str], str] = {}
    for case in stream.all_cases():
        key = (case.file, case.id)
        if key in first:
            out.invalid.append(Located(where=case.where, message=f"duplicate case id `{case.id}` in this file "
                                                                  f"(first at {first[key]})"))
            continue
        first[key] = case.where
        turns = _turns(case)
        if not any(t.checked for t in turns) and case.contract not in contracts:
            hint = f", or --model with its contract `{case.contract}`" if case.contract is not None else ""
            out.invalid.append(Located(where=case.where, message=f"case `{case.id}` has no expected answer and no "
                                       f"other check: fill in `Expected answer` (or give must_have, must_not, assert"
                                       f"{hint})"))
            continue
        out.cases.append(AnswerGolden(case, turns))
    out.invalid[:0] = [Located(where=f"{i.file}:{i.line}", message=i.message) for i in stream.invalid]
    return out


def match_runs(goldens: list[AnswerGolden], runs: Sequence[ObservedRun]) -> list[Located]:
    """Each run given to the case it answers (module docstring); the runs that answer no case, with why."""
    names: dict[str, list[AnswerGolden]] = {}
    for g in goldens:
        for name in dict.fromkeys((g.case.id, f"{g.scope}/{g.case.id}")):
            names.setdefault(name, []).append(g)
    declared = {run.where: run.case_id for run in runs if run.case_id is not None}  # the transcript's own case_id
    per_file: dict[str, int] = {}
    for run in runs:
        per_file[run.file] = per_file.get(run.file, 0) + 1
    unmatched: list[Located] = []
    for run in runs:
        rules: list[tuple[str, str]] = []
        if run.where in declared:
            rules.append(("case_id", declared[run.where]))
        if per_file[run.file] == 1:
            rules.append(("file name", Path(run.file).stem))
        rules.append(("conversation id", run.context.conversation_id or run.id))
        why = f"no case named {', '.join(f'`{n}` ({rule})' for rule, n in rules)}"
        for rule, name in rules:
            candidates = names.get(name, [])
            if len(candidates) > 1:
                why = (f"`{name}` ({rule}) names several cases: "
                       + ", ".join(f"{c.scope}/{c.case.id}" for c in candidates) + "; write STEM/ID")
                break
            if candidates:
                golden = candidates[0]
                if golden.run is not None:
                    why = f"case `{name}` ({rule}) is answered already by {golden.run.where}"
                    break
                golden.run, golden.matched_by, why = run, rule, ""
                break
        if why:
            unmatched.append(Located(where=f"{run.where} (run {run.id})", message=why))
    return unmatched


def exchanges(run: ObservedRun) -> list[str]:
    """The run's answers in order: the assistant text after each user message, up to the next one. A run the agent
    cut short (`agent_error`) ends at its last answered exchange: the turn it did not answer has no answer at all,
    which is not the empty answer a judge would fail."""
    answers: list[list[str]] = []
    replied: list[bool] = []
    users = any(s.kind == "user" for s in run.steps)
    if not users:
        answers.append([])
        replied.append(False)
    for step in run.steps:
        if step.kind == "user":
            answers.append([])
            replied.append(False)
        elif step.kind in ("assistant", "tool_call") and answers:
            replied[-1] = True
            if step.kind == "assistant" and step.text:
                answers[-1].append(step.text)
    if run.agent_error is not None:
        while replied and not replied[-1]:
            replied.pop()
            answers.pop()
    return ["\n".join(parts) for parts in answers]


def _combine(verdicts: list[tuple[int, Verdict]], single: bool) -> Verdict:
    """A criterion's verdicts over a case's judged turns: fail if one fails, else error, else not_judged, else pass."""
    for value in ("fail", "error", "not_judged"):
        hit = [(n, v) for n, v in verdicts if v.verdict == value]
        if hit:
            break
    else:
        hit = verdicts
    reason = "; ".join(v.reason if single else f"turn {n}: {v.reason}" for n, v in hit)
    judges = dict.fromkeys(v.judge for _, v in hit)
    versions = dict.fromkeys(v.judge_version for _, v in hit if v.judge_version)
    return Verdict(hit[0][1].verdict, reason, ", ".join(judges), ", ".join(versions))


def judge_inputs(golden: AnswerGolden, config: CriteriaConfig) -> list[JudgeInput]:
    """What a judge is asked about a case (--show-prompt): each judged turn that has an answer, on each enabled
    criterion; a turn without an answer is never sent to a judge."""
    answers = exchanges(golden.run) if golden.run is not None else []
    return [JudgeInput(c, answers[n], t.expected, t.question, t.assertions, f"{golden.case.id} turn {n + 1}")
            for n, t in enumerate(golden.turns) if t.checked and n < len(answers) for c in config.enabled]


@dataclass
class ContractJudged:
    """What a case's contract found on its last answer: the hard gate's items and the soft rubric's verdicts."""

    verdict: ContractVerdict
    soft: dict[str, Verdict]


def judge_contracts(goldens: list[AnswerGolden], config: CriteriaConfig, default: Judge,
                    judges: Mapping[str, Judge] | None, contracts: Mapping[str, ContractModel]
                    ) -> dict[int, ContractJudged | str]:
    """Per case (by index) naming a loaded contract: its last answer judged on the contract's items and soft rubric
    (in batches, one judge_many per judge), or why it was not (no answer recorded: a reason every item gets)."""
    chosen = dict(judges or {})
    configured = [c.key for c in config.enabled]
    requests: list[tuple[ContractModel, str, str, str]] = []
    soft_asked: dict[int, tuple[Judge, list[tuple[int, str, JudgeInput]]]] = {}
    out: dict[int, ContractJudged | str] = {}
    at: list[int] = []
    for index, golden in enumerate(goldens):
        contract = contracts.get(golden.case.contract) if golden.case.contract is not None else None
        if contract is None:
            continue
        answers = exchanges(golden.run) if golden.run is not None else []
        last = len(golden.turns)
        if golden.run is None:
            out[index] = "no answer recorded (no run matches this case)"
            continue
        if last > len(answers) or last == 0:
            out[index] = f"no answer recorded for turn {last} (the last) in {golden.run.where}"
            continue
        turn = golden.turns[last - 1]
        answer, case_id = answers[last - 1], f"{golden.case.id} turn {last}"
        requests.append((contract, answer, turn.question, case_id))
        at.append(index)
        for criterion in soft_criteria(contract, configured):
            judge = chosen.get(criterion.key, default)
            item = JudgeInput(criterion, answer, turn.expected, turn.question, turn.assertions, case_id)
            soft_asked.setdefault(id(judge), (judge, []))[1].append((index, criterion.key, item))
    soft: dict[int, dict[str, Verdict]] = {}
    for judge, entries in soft_asked.values():
        for (index, key, _), verdict in zip(entries, judge.judge_many([item for _, _, item in entries])):
            soft.setdefault(index, {})[key] = verdict
    for index, (contract, *_), items in zip(at, requests, judge_answers(requests, default, chosen)):
        out[index] = ContractJudged(ContractVerdict(contract.name, items), soft.get(index, {}))
    return out


def _contract_result(contract: ContractModel, judged: ContractJudged | str) -> tuple[ContractResult, VerdictValue,
                                                                                   str, list[str]]:
    """The report's contract part of a case, its verdict and reason, and the must_not items it violates."""
    if isinstance(judged, str):  # nothing to judge: every item not judged, for the one reason
        items = [ContractItemResult(id=i.key, criterion="must_have" if i.key.startswith("must_have[") else "must_not",
                                    text=i.text, verdict="not_judged", reason=judged, judge=NO_JUDGE)
                 for i in (*contract.must_have, *contract.must_not)]
        passed = not items
        verdict: VerdictValue = "pass" if passed else "not_judged"
        reason = f"contract {contract.name}: " + (f"not judged: {judged}" if items else "no must_have or must_not item")
        return ContractResult(id=contract.name, hard_gate_passed=passed, verdict=verdict, items=items), verdict, \
            reason, []
    found = judged.verdict
    items = [ContractItemResult(id=i.id, criterion=i.criterion, text=i.text, verdict=i.verdict, reason=i.reason,
                                judge=i.judge, judge_version=i.judge_version) for i in found.items]
    return (ContractResult(id=found.contract_id, hard_gate_passed=found.hard_gate_passed, verdict=found.verdict,
                           items=items), found.verdict, found.reason(), found.must_not_violated)


_WORST: tuple[VerdictValue, ...] = ("fail", "error", "not_judged", "pass")


def _worst(*values: VerdictValue) -> VerdictValue:
    return min(values, key=_WORST.index)


def judge_goldens(goldens: list[AnswerGolden], config: CriteriaConfig, default: Judge,
                  judges: Mapping[str, Judge] | None = None,
                  contracts: Mapping[str, ContractModel] | None = None) -> list[CaseResult]:
    """Every case judged: each judged turn with an answer by the judges, the rest not_judged; the last answer of a
    case naming a loaded contract on that contract (module docstring); then overall."""
    asked: list[AnswerCase] = []
    where: list[tuple[int, int]] = []  # (case index, turn number) of each asked AnswerCase
    for index, golden in enumerate(goldens):
        answers = exchanges(golden.run) if golden.run is not None else []
        for n, turn in enumerate(golden.turns, start=1):
            if turn.checked and n <= len(answers):
                asked.append(AnswerCase(f"{golden.case.id} turn {n}", answers[n - 1], turn.expected, turn.question,
                                        turn.assertions))
                where.append((index, n))
    judged: dict[tuple[int, int], Mapping[str, Verdict]] = {
        at: result.criteria for at, result in zip(where, judge_cases(asked, config, default, judges))}
    loaded = contracts or {}
    on_contract = judge_contracts(goldens, config, default, judges, loaded)
    out = []
    for index, golden in enumerate(goldens):
        answers = exchanges(golden.run) if golden.run is not None else []
        checked = [n for n, t in enumerate(golden.turns, start=1) if t.checked]
        criteria: dict[str, Verdict] = {}
        for criterion in config.enabled if checked else ():
            per_turn = []
            for n in checked:
                if (index, n) in judged:
                    per_turn.append((n, judged[(index, n)][criterion.key]))
                elif golden.run is None:
                    per_turn.append((n, Verdict("not_judged", "no answer recorded (no run matches this case)",
                                                NO_JUDGE, "")))
                else:
                    per_turn.append((n, Verdict("not_judged", f"no answer recorded for turn {n} in {golden.run.where}",
                                                NO_JUDGE, "")))
            criteria[criterion.key] = _combine(per_turn, len(checked) == 1)
        overall = overall_verdict(criteria, config)
        verdict, reason = overall.verdict, overall.reason
        contract_part, soft = None, {}
        violated: list[str] = []
        if index in on_contract and golden.case.contract is not None:
            outcome = on_contract[index]
            contract_part, contract_verdict, contract_reason, violated = _contract_result(
                loaded[golden.case.contract], outcome)
            soft = outcome.soft if isinstance(outcome, ContractJudged) else {}
            if checked:
                verdict, reason = _worst(verdict, contract_verdict), f"{reason}; {contract_reason}"
            else:  # the contract is the case's only check
                verdict, reason = contract_verdict, contract_reason
        agent_error = golden.run.agent_error if golden.run is not None else None
        if agent_error is not None:  # the agent did not answer every turn: whatever was judged, the case is in error
            verdict, reason = "error", f"agent error: {agent_error}; {reason}"
        turns = [TurnAnswer(question=t.question, expected=list(t.expected),
                            actual=answers[n] if n < len(answers) else None, judged=t.checked)
                 for n, t in enumerate(golden.turns)]
        said = [p for n, t in enumerate(golden.turns) if n < len(answers) for p in forbidden_said(t.assertions,
                                                                                                   answers[n])]
        shown = {k: CriterionVerdict(verdict=v.verdict, reason=v.reason, judge=v.judge, judge_version=v.judge_version)
                 for k, v in criteria.items()}
        shown.update({k: CriterionVerdict(verdict=v.verdict, reason=v.reason, judge=v.judge,
                                          judge_version=v.judge_version, gating=False) for k, v in soft.items()})
        out.append(CaseResult(
            id=golden.case.id, file=golden.case.file, where=golden.case.where,
            run=golden.run.where if golden.run is not None else None, matched_by=golden.matched_by, turns=turns,
            criteria=shown,
            overall=OverallVerdict(verdict=verdict, reason=reason, passed_weight=str(overall.passed_weight),
                                   threshold=str(overall.threshold)),
            contract=contract_part, must_not_violated=list(dict.fromkeys([*said, *violated])),
            agent_error=agent_error))
    return out


def _rate(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


# Cases judged between two checkpoints (`mbt eval --save`): small enough that a run stopped midway loses little
# judging (an LLM judge asks a part's verdicts on its threads at once), large enough that writing costs nothing.
CHECKPOINT_PART = 256


class Checkpoint(Protocol):
    """Where the cases are kept as they are judged (mbt.store.checkpoint, for `mbt eval --save` and `--resume`):
    told of every case before any is judged; asked, part by part, which cases were kept before (a resumed set: they
    are not judged again); given each part's newly judged cases."""

    def start(self, goldens: Sequence[AnswerGolden]) -> None: ...

    def kept(self, goldens: Sequence[AnswerGolden]) -> list[CaseResult | None]: ...

    def save(self, goldens: Sequence[AnswerGolden], cases: Sequence[CaseResult]) -> None: ...


def _judge_checkpointed(goldens: list[AnswerGolden], checkpoint: Checkpoint,
                        judge: Callable[[list[AnswerGolden]], list[CaseResult]],
                        finish: Callable[[list[CaseResult]], None]) -> list[CaseResult]:
    """Every case in parts of CHECKPOINT_PART: the cases kept before taken as they were, the others judged
    (`judge`), completed (`finish`: their verdict on the model) and saved before the next part is judged."""
    checkpoint.start(goldens)
    out: list[CaseResult] = []
    for start in range(0, len(goldens), CHECKPOINT_PART):
        part = goldens[start:start + CHECKPOINT_PART]
        kept = checkpoint.kept(part)
        asked = [g for g, k in zip(part, kept) if k is None]
        judged = judge(asked) if asked else []
        finish(judged)
        if judged:
            checkpoint.save(asked, judged)
        fresh = iter(judged)
        out.extend(k if k is not None else next(fresh) for k in kept)
    return out


def evaluate(golden_paths: list[str], run_paths: list[str], config: CriteriaConfig, default: Judge,
             judges: Mapping[str, Judge] | None = None,
             model_verdicts: Mapping[str, tuple[str, str]] | None = None, models: Sequence[str] = (),
             gate: Gate | None = None,
             sayings: Callable[[list[AnswerGolden]], list[ModelSayings]] | None = None,
             contracts: Sequence[ContractModel] = (), only: Collection[str] | None = None,
             merge: Callable[[list[CaseResult]], list[CaseResult]] | None = None,
             checkpoint: Checkpoint | None = None, jobs: int | None = None) -> EvalReport:
    """The whole `mbt eval` report: goldens read, runs read and matched, every case judged, totals and the gate
    (mbt.answers.gate: `gate`'s answer rules, else the default). `model_verdicts` (with --model): each run's verdict
    and reason on the behaviour model, by where it was read; a case whose run did not pass there fails the gate too
    (not judged on the model included: never green on it). `sayings` (with --model): the matched cases -> the
    models' say and claim elements verified by the answers (mbt.answers.sayings.saying_report), reported, not gated:
    a wrong saying is the run's deviation on the model. `contracts` (the contract models --model gives): the cases
    naming one are judged on it too. `only` (`mbt eval --retry-errors NAME`): judge only the cases of these keys
    (`STEM/ID`, or the golden file's path and the id), the runs of the others matched and left aside; `merge` then
    puts the judged cases among the set's others before the totals are counted. `checkpoint`: the cases kept as they
    are judged, part by part, and those kept by an earlier, interrupted run taken instead of judged again
    (mbt.store.checkpoint). `jobs`: whole cases judged in that many parts at once (mbt.answers.jobs.in_parts): only
    for judges that need nothing but the CPU, and the report is the same."""
    loaded = {c.name: c for c in contracts}
    goldens = load_answer_goldens(golden_paths, loaded)
    runset = read_runs(run_paths)
    unmatched = match_runs(goldens.cases, runset.runs)
    if only is not None:
        chosen = set(only)
        goldens.cases = [g for g in goldens.cases if f"{g.scope}/{g.case.id}" in chosen
                         or f"{g.case.file}/{g.case.id}" in chosen]

    def on_model(judged: list[CaseResult]) -> None:
        if model_verdicts is None:
            return
        for case in judged:
            if case.run is not None:
                verdict, reason = model_verdicts.get(case.run, ("not_judged", "the run was not judged on the model"))
                case.model = ModelVerdict(verdict=verdict, reason=reason)

    def judge(part: list[AnswerGolden]) -> list[CaseResult]:
        return in_parts(lambda cases: judge_goldens(list(cases), config, default, judges, loaded), part, jobs)

    if checkpoint is None:
        cases = judge(goldens.cases)
        on_model(cases)
    else:
        cases = _judge_checkpointed(goldens.cases, checkpoint, judge, on_model)
    notes = _unknown_contracts(goldens.cases, loaded)
    elements = sayings(goldens.cases) if sayings is not None else []
    if merge is not None:
        cases = merge(cases)
    return summarise(cases, config, default, judges, gate, unmatched=unmatched, invalid_cases=goldens.invalid,
                     invalid_runs=[Located(where=i.where, message=i.message) for i in runset.invalid],
                     models=models, sayings=elements, notes=notes)


def summarise(cases: list[CaseResult], config: CriteriaConfig, default: Judge, judges: Mapping[str, Judge] | None,
              gate: Gate | None, unmatched: Sequence[Located] = (), invalid_cases: Sequence[Located] = (),
              invalid_runs: Sequence[Located] = (), models: Sequence[str] = (),
              sayings: Sequence[ModelSayings] = (), notes: Sequence[Located] = ()) -> EvalReport:
    """The report of judged cases: seed 001's overview (counts and rates over the cases run successfully), overall and
    per criterion, and the gate. `mbt eval --retry-errors NAME` sums a stored set's cases up again through it, the
    re-run cases in place of the errored ones."""
    # Seed 001's overview: cases run successfully (the agent answered, no criterion in error) and with errors; the
    # pass count and rate overall and per criterion over the cases run successfully.
    ok = [case for case in cases if case.run_successfully]
    summaries = []
    for c in config.enabled:
        # a case judged on its contract alone has no verdict of the configured criteria: counted as not judged
        values = [case.criteria[c.key].verdict if c.key in case.criteria else "not_judged" for case in cases]
        passed_ok = sum(case.criteria[c.key].verdict == "pass" for case in ok if c.key in case.criteria)
        summaries.append(CriterionSummary(key=c.key, weight=str(c.exact_weight),
                                          judge=(judges or {}).get(c.key, default).name, passed=values.count("pass"),
                                          failed=values.count("fail"), not_judged=values.count("not_judged"),
                                          errors=values.count("error"), passed_ok=passed_ok,
                                          pass_rate=_rate(passed_ok, len(ok))))
    soft_keys = dict.fromkeys(k for case in cases for k, v in case.criteria.items() if not v.gating)
    for key in soft_keys:  # a contract's soft rubric: over the cases that have it, beside the gate
        values = [case.criteria[key].verdict for case in cases if key in case.criteria]
        passed_ok = sum(case.criteria[key].verdict == "pass" for case in ok if key in case.criteria)
        summaries.append(CriterionSummary(key=key, weight="1", judge=(judges or {}).get(key, default).name,
                                          passed=values.count("pass"), failed=values.count("fail"),
                                          not_judged=values.count("not_judged"), errors=values.count("error"),
                                          passed_ok=passed_ok,
                                          pass_rate=_rate(passed_ok, sum(key in case.criteria for case in ok)),
                                          gating=False))
    overall = [case.overall.verdict for case in cases]
    passed_ok = sum(case.overall.verdict == "pass" for case in ok)
    report = EvalReport(
        judge=default.name, threshold=str(config.threshold), criteria=summaries, cases_total=len(cases),
        cases_ok=len(ok), cases_with_errors=len(cases) - len(ok), passed=overall.count("pass"),
        failed=overall.count("fail"), not_judged=overall.count("not_judged"), errors=overall.count("error"),
        passed_ok=passed_ok, pass_rate=_rate(passed_ok, len(ok)),
        judge_errors=sum(case.judge_errors for case in cases),
        must_not_violated=sum(len(case.must_not_violated) for case in cases), cases=cases,
        agent_errors=sum(case.agent_error is not None for case in cases),
        runs_without_case=list(unmatched), invalid_cases=list(invalid_cases), invalid_runs=list(invalid_runs),
        models=list(models), sayings=list(sayings), notes=list(notes),
        gate=EvalGate(passed=False, failures=[]))
    report.gate = answers_gate(report, gate)
    return report


def _unknown_contracts(goldens: list[AnswerGolden], loaded: Mapping[str, ContractModel]) -> list[Located]:
    """One note per contract that cases name and no --model gives: its items are not judged on their answers."""
    named: dict[str, list[AnswerGolden]] = {}
    for golden in goldens:
        if golden.case.contract is not None and golden.case.contract not in loaded:
            named.setdefault(golden.case.contract, []).append(golden)
    return [Located(where=found[0].case.where,
                    message=f"{len(found)} case(s) name contract `{name}`, which no --model gives: their answers are "
                            f"not judged on its must_have / must_not items (give the contract's YAML with --model)")
            for name, found in named.items()]
