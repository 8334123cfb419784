"""Benchmark: a synthetic ABAC policy of 500 rules over 20 attributes; prints analysis seconds (never asserts).

    python tests/bench/bench_policies.py              # 500 rules, 20 attributes, 100,000 requests
    python tests/bench/bench_policies.py --quick      # 60 rules, 2,000 requests: a smoke run, a few seconds
    python tests/bench/bench_policies.py --rules 1000 --requests 200000 --algorithm first-applicable

Figures: parse + resolve; z3 analysis split into never/always-applicable, never-decisive, conflicts (permit/deny
pairs), gaps and declared properties, with the number of solver queries; element enumeration; evaluation
throughput of the compiled evaluator; and a sample of z3 witnesses replayed on the evaluator (all must agree).
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout without installing

from mbt.analysis.policy_checks import PolicyAnalysis, PolicyChecker  # noqa: E402
from mbt.elements.policy import enumerate_policy  # noqa: E402
from mbt.engine.policy import PolicyEvaluator  # noqa: E402
from mbt.goldens.cases import GoldenCase  # noqa: E402
from mbt.goldens.replay_policy import CompiledPolicy, PolicyReplayer  # noqa: E402
from mbt.goldens.requests import PolicyRequest  # noqa: E402
from mbt.parsing.loader import load_file  # noqa: E402

ACTIONS = ["read", "create", "update", "approve", "revoke"]
ROLES = ["customer", "agent", "supervisor", "auditor"]
DEPTS = ["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"]
TYPES = ["order", "refund", "invoice", "ticket", "account", "report"]
CHANNELS = ["web", "app", "phone", "chat"]
REGIONS = ["eu", "us", "apac"]
ATTRIBUTES = [  # 20 attributes over the four categories
    ("subject.id", "string"), ("subject.role", "enum{" + ", ".join(ROLES) + "}"),
    ("subject.dept", "enum{" + ", ".join(DEPTS) + "}"), ("subject.level", "int[0..10]"),
    ("subject.limit", "number precision 0.01 [0..10000]"), ("subject.verified", "bool"),
    ("subject.region", "enum{" + ", ".join(REGIONS) + "}"),
    ("resource.owner", "string"), ("resource.type", "enum{" + ", ".join(TYPES) + "}"),
    ("resource.dept", "enum{" + ", ".join(DEPTS) + "}"), ("resource.amount", "number precision 0.01 [0..50000]"),
    ("resource.sensitivity", "int[0..5]"), ("resource.locked", "bool"),
    ("resource.region", "enum{" + ", ".join(REGIONS) + "}"), ("resource.age_days", "int[0..365]"),
    ("action.id", "enum{" + ", ".join(ACTIONS) + "}"),
    ("environment.hour", "int[0..23]"), ("environment.channel", "enum{" + ", ".join(CHANNELS) + "}"),
    ("environment.emergency", "bool"), ("environment.load", "int[0..100]"),
]


def atom(rng: random.Random) -> str:
    kind = rng.randrange(10)
    if kind == 0:
        return f"resource.amount {rng.choice(['<=', '>', '<', '>='])} {rng.randrange(0, 5000)}.{rng.randrange(100):02d}"
    if kind == 1:
        return f"subject.level >= {rng.randrange(0, 11)}"
    if kind == 2:
        return f"resource.sensitivity <= {rng.randrange(0, 6)}"
    if kind == 3:
        return rng.choice(["subject.id == resource.owner", "subject.dept == resource.dept",
                           "subject.region == resource.region", "resource.amount <= subject.limit"])
    if kind == 4:
        return f"environment.hour {rng.choice(['<', '>='])} {rng.randrange(6, 20)}"
    if kind == 5:
        return rng.choice(["subject.verified", "not resource.locked", "environment.emergency", "resource.locked"])
    if kind == 6:
        return f"resource.type in {{{', '.join(rng.sample(TYPES, rng.randrange(1, 4)))}}}"
    if kind == 7:
        return f"environment.channel != {rng.choice(CHANNELS)}"
    if kind == 8:
        return f"resource.age_days > {rng.randrange(0, 365)}"
    return f"environment.load < {rng.randrange(10, 100)}"


def synth(rules: int, algorithm: str, seed: int = 7) -> str:
    rng = random.Random(seed)
    lines = ["policy bench {", f"  combining {algorithm}"]
    lines += [f"  {name}: {vtype}" for name, vtype in ATTRIBUTES]
    for i in range(rules):
        effect = "permit" if rng.random() < 0.55 else "deny"
        roles = rng.sample(ROLES, rng.randrange(1, 3))
        target = f"action.id == {rng.choice(ACTIONS)} and subject.role in {{{', '.join(roles)}}}"
        if rng.random() < 0.3:
            target += f" and subject.dept == {rng.choice(DEPTS)}"
        condition = " and ".join(atom(rng) for _ in range(rng.randrange(1, 4)))
        if rng.random() < 0.15:
            condition = f"({condition}) or {atom(rng)}"
        lines.append(f"  {effect} r{i} target {target} when {condition}")
    for i in range(3):
        lines.append(f"  assert never permit when action.id == {ACTIONS[i]} and resource.locked and not "
                     "environment.emergency")
    lines.append("}")
    return "\n".join(lines) + "\n"


def random_request(rng: random.Random) -> dict:
    return {
        "subject.id": rng.choice(["u1", "u2", "u3"]), "subject.role": rng.choice(ROLES),
        "subject.dept": rng.choice(DEPTS), "subject.level": rng.randrange(11),
        "subject.limit": Decimal(rng.randrange(0, 1000000)) / 100, "subject.verified": rng.random() < 0.5,
        "subject.region": rng.choice(REGIONS), "resource.owner": rng.choice(["u1", "u2", "u3"]),
        "resource.type": rng.choice(TYPES), "resource.dept": rng.choice(DEPTS),
        "resource.amount": Decimal(rng.randrange(0, 5000000)) / 100, "resource.sensitivity": rng.randrange(6),
        "resource.locked": rng.random() < 0.3, "resource.region": rng.choice(REGIONS),
        "resource.age_days": rng.randrange(366), "action.id": rng.choice(ACTIONS),
        "environment.hour": rng.randrange(24), "environment.channel": rng.choice(CHANNELS),
        "environment.emergency": rng.random() < 0.1, "environment.load": rng.randrange(101),
    }


def timed(func, *args):
    start = time.perf_counter()
    result = func(*args)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rules", type=int, default=None)
    parser.add_argument("--requests", type=int, default=None)
    parser.add_argument("--algorithm", default="deny-overrides")
    args = parser.parse_args()
    rules = args.rules or (60 if args.quick else 500)
    requests = args.requests or (2000 if args.quick else 100_000)
    print(f"mbt policy benchmark: {rules} rules, {len(ATTRIBUTES)} attributes, {args.algorithm}, "
          f"{requests:,} requests (python {platform.python_version()}, {platform.machine()})")

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.policy"
        path.write_text(synth(rules, args.algorithm), encoding="utf-8")
        loaded, parse_s = timed(load_file, path)
    model = loaded.models[0]
    print(f"  parse + resolve                {parse_s:8.2f} s")

    analysis = PolicyAnalysis(model)
    _, applicable_s = timed(lambda: analysis.applicable)
    _, decisive_s = timed(lambda: analysis.decisive)
    conflicts, conflicts_s = timed(lambda: analysis.conflicts)
    checker = PolicyChecker(model, analysis)
    _, rest_s = timed(checker.run)  # gaps, properties, always-applies (the rest is cached)
    total = applicable_s + decisive_s + conflicts_s + rest_s
    codes: dict[str, int] = {}
    for f in checker.findings:
        codes[f.code] = codes.get(f.code, 0) + 1
    pairs = sum(1 for i, r in enumerate(model.rules) for s in model.rules[i + 1:] if r.effect != s.effect)
    print(f"  rules that can apply           {applicable_s:8.2f} s   "
          f"{sum(1 for a in analysis.applicable.values() if a.sat)} can, "
          f"{sum(1 for a in analysis.applicable.values() if a.unsat)} never")
    print(f"  rules that can decide          {decisive_s:8.2f} s   "
          f"{sum(1 for a in analysis.decisive.values() if a.unsat)} never decisive (shadowed/overridden)")
    print(f"  conflicts (permit/deny pairs)  {conflicts_s:8.2f} s   {len(conflicts):,} of {pairs:,} pairs conflict")
    print(f"  gaps, properties, always       {rest_s:8.2f} s")
    print(f"  analysis total                 {total:8.2f} s   (target: under 20 s); "
          f"{analysis.encoding.queries:,} z3 queries; findings {dict(sorted(codes.items()))}")

    elements, enum_s = timed(enumerate_policy, model, analysis)
    print(f"  elements (cached analysis)     {enum_s:8.2f} s   {len(elements):,} elements")

    evaluator = PolicyEvaluator(model)
    rng = random.Random(11)
    batch = [random_request(rng) for _ in range(requests)]
    start = time.perf_counter()
    decisions: dict[str, int] = {}
    for request in batch:
        d = evaluator.evaluate(request).decision
        decisions[d] = decisions.get(d, 0) + 1
    eval_s = time.perf_counter() - start
    print(f"  evaluation                     {eval_s:8.2f} s   {requests / eval_s:,.0f} requests/s "
          f"(index on {evaluator.index_attribute}); {dict(sorted(decisions.items()))}")

    # Request goldens replayed as `mbt coverage` does: values checked against the types, elements marked.
    replayer = PolicyReplayer(CompiledPolicy(model, elements))
    cases = [GoldenCase(id=f"R{i}", model=model.name, request=PolicyRequest(
        policy=model.name, attributes=request, expect=decision_of))
        for i, (request, decision_of) in enumerate((r, evaluator.evaluate(r).decision) for r in batch)]
    start = time.perf_counter()
    covered: set[int] = set()
    for case in cases:
        covered |= replayer.replay(case).verified
    replay_s = time.perf_counter() - start
    print(f"  request goldens replayed       {replay_s:8.2f} s   {requests / replay_s:,.0f} cases/s; "
          f"{len(covered):,} of {len(elements):,} elements verified")

    replayed = agree = 0
    for c in conflicts[:200]:
        replayed += 1
        outcome = evaluator.evaluate(c.request)
        agree += outcome.value(model.rules[c.first].name) == "applies" == outcome.value(model.rules[c.second].name)
    print(f"  conflict witnesses replayed    {agree}/{replayed} agree with the evaluator")


if __name__ == "__main__":
    main()
