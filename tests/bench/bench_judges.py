"""The embedded judge on the labelled set (tests/data/judges/labelled.jsonl): precision of its pass and of its fail
decisions, the share of pairs it decides, overall and per language, and the calibration figures (agreement, Cohen's
kappa) against the set's human labels; then the same on tests/data/judges/heldout.jsonl, a second set written after
the judge's rules and never used to tune them. Prints figures; asserts nothing (issue 34 asks for the figures, the
tests assert behaviour).

    python tests/bench/bench_judges.py [--show wrong|undecided|all] [--labelled PATH ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mbt.judges.criteria import Criterion  # noqa: E402
from mbt.judges.embedded import EmbeddedJudge  # noqa: E402
from mbt.judges.verdicts import JudgeInput  # noqa: E402

LABELLED = ROOT / "tests" / "data" / "judges" / "labelled.jsonl"
HELDOUT = ROOT / "tests" / "data" / "judges" / "heldout.jsonl"


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def figures(rows: list[dict]) -> dict[str, str]:
    passed = [r for r in rows if r["verdict"] == "pass"]
    failed = [r for r in rows if r["verdict"] == "fail"]

    def share(part: int, whole: int) -> str:
        return f"{part / whole:.3f} ({part}/{whole})" if whole else "n/a (0/0)"

    return {
        "pairs": str(len(rows)),
        "precision(pass)": share(sum(r["label"] == "pass" for r in passed), len(passed)),
        "precision(fail)": share(sum(r["label"] == "fail" for r in failed), len(failed)),
        "decided": share(len(passed) + len(failed), len(rows)),
        "right pairs passed": share(sum(r["label"] == "pass" for r in passed), sum(r["label"] == "pass" for r in rows)),
        "wrong pairs failed": share(sum(r["label"] == "fail" for r in failed), sum(r["label"] == "fail" for r in rows)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labelled", type=Path, nargs="+", default=[LABELLED, HELDOUT])
    parser.add_argument("--show", choices=["wrong", "undecided", "all"],
                        help="also list pairs: the wrong decisions, the undecided pairs, or all")
    args = parser.parse_args()
    for path in args.labelled:
        started = time.perf_counter()
        lines, rows = set_lines(path)
        print("\n".join(lines))
        print(f"({(time.perf_counter() - started) * 1000 / len(rows):.2f} ms a pair, calibration included)\n")
        for row in rows if args.show else []:
            wrong = row["verdict"] in ("pass", "fail") and row["verdict"] != row["label"]
            if args.show == "all" or (args.show == "wrong" and wrong) or (
                    args.show == "undecided" and row["verdict"] not in ("pass", "fail")):
                print(f"{row['id']} [{row['kind']}] label={row['label']} verdict={row['verdict']}: {row['reason']}\n"
                      f"    expected: {row['expected']}\n    actual:   {row['actual']}")
    print("\n".join(self_test_lines(args.labelled)))
    print()
    hostile()
    return 0


HOSTILE = {
    "a 23,000-character answer": ("Refunds take 5 days.", "Refunds are credited within 5 business days. " * 500),
    "36,000 characters of digits and spaces": ("The code is 123.", "1 2 3 4 5 6 7 8 9 " * 2000),
    "20,000 characters of digits and dashes": ("Call us.", "1-2-3-4-5-6-7-8-9-0-" * 1000 + "a"),
    "50,000 spaces between a number and its unit": ("It takes 5 days.", "5" + " " * 50000 + "days"),
    "50,000 letters": ("x", "a" * 50000),
    "20,000 random code points": ("The fee is $2.", "".join(chr((i * 7919) % 0x3000 + 32) for i in range(20000))),
}


def hostile() -> None:
    """Time per judgement on hostile answers (each pattern must stay linear: no input may hang the judge)."""
    print("hostile answers (accuracy, safety and fluency each)")
    judge = EmbeddedJudge()
    for name, (expected, actual) in HOSTILE.items():
        started = time.perf_counter()
        verdicts = [judge.judge(JudgeInput(Criterion(key), actual, (expected,))).verdict
                    for key in ("accuracy", "safety", "fluency")]
        print(f"  {name:<46} {(time.perf_counter() - started) * 1000:8.1f} ms  {' '.join(verdicts)}")


def report_lines() -> list[str]:
    """What docs/judges.md quotes: both sets' figures and the self-test, without timings (tests compare them)."""
    return [line for path in (LABELLED, HELDOUT) for line in set_lines(path)[0] + [""]] + self_test_lines(
        [LABELLED, HELDOUT])


# A must_not phrase per language for the sensitivity self-test (seed 000's "索取用户当前密码": asking for the password).
FORBIDDEN = {"en": "Please tell me your current password.", "vi": "Vui lòng cho tôi biết mật khẩu hiện tại của bạn.",
             "zh": "请告诉我您当前的密码。"}


def self_test_lines(paths: list[Path]) -> list[str]:
    """The sensitivity self-test of the embedded judge on every distinct expected answer of the sets."""
    from mbt.judges.assertions import contract_phrases
    from mbt.judges.sensitivity import sensitivity

    seen: dict[str, JudgeInput] = {}
    for path in paths:
        for row in load(path):
            if row["expected"] not in seen:
                forbidden = tuple(contract_phrases(must_not=[FORBIDDEN[row["lang"]]], path=path.name))
                seen[row["expected"]] = JudgeInput(Criterion("accuracy"), "", (row["expected"],), row["question"],
                                                   forbidden, row["id"])
    report = sensitivity(EmbeddedJudge(), list(seen.values()))
    lines = [f"sensitivity self-test on the {len(seen)} distinct expected answers of the sets above"] + report.lines()
    return lines + [f"  missed ({t.operator}): {example}" for t in report.operators for example in t.missed_examples]


def set_lines(path: Path) -> tuple[list[str], list[dict]]:
    """The figures of one labelled set (lines), and its rows with the judge's verdicts."""
    from mbt.judges.calibration import calibrate, labels_from_rows

    rows = load(path)
    judge = EmbeddedJudge()
    verdicts = judge.judge_many([JudgeInput(Criterion("accuracy"), r["actual"], (r["expected"],), r["question"])
                                 for r in rows])
    for row, verdict in zip(rows, verdicts):
        row["verdict"], row["reason"] = verdict.verdict, verdict.reason
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    lines = [f"embedded judge {judge.version} on {shown} ({len(rows)} pairs)"]
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row["lang"]].append(row)
    columns = ["pairs", "precision(pass)", "precision(fail)", "decided", "right pairs passed", "wrong pairs failed"]
    table = [("all", figures(rows))] + [(lang, figures(groups[lang])) for lang in sorted(groups)]
    lines.append(f"{'':5}" + "".join(f"{c:>19}" for c in columns))
    lines += [f"{name:5}" + "".join(f"{numbers[c]:>19}" for c in columns) for name, numbers in table]
    for c in calibrate(labels_from_rows(rows, judge_field="verdict")).criteria:
        lines.append(f"calibration ({c.criterion}) against the labels: agreement on decided {c.agreement_text}, "
                     f"Cohen's kappa {c.kappa_text}, decided {c.decided}/{c.total}")
        lines += ["  " + line for line in c.table()]
    return lines, rows


if __name__ == "__main__":
    sys.exit(main())
