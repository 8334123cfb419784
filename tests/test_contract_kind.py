"""Seed 000's contract YAML read natively as a model of kind `contract` (issue 34, item 4): `mbt check`, `mbt
elements`, `mbt coverage` and `mbt render` take the unchanged seed file; every item is an element whose id is its key
path and whose span is its YAML leaf; a folder of models picks a contract up by its content and never a golden YAML
file; bad contracts are one located message and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import run_mbt
from tests.json_report import expanded

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "models" / "contracts" / "password-reset.yaml"


def lines_of(text: str, needle: str) -> int:
    """The 1-based line of the first line holding `needle`."""
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


def test_the_seed_contract_is_a_model_whose_items_are_elements_citing_their_yaml_leaves():
    done = run_mbt("elements", "--model", CONTRACT, "--format", "json", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    (model,) = json.loads(done.stdout)["models"]
    assert (model["model"], model["kind"]) == ("password-reset-v1", "contract")
    assert model["criteria"] == ["intent", "must_have", "must_not", "grounding", "recovery"]
    ids = [e["id"] for e in model["elements"]]
    assert ids == ["intent_if_exposed", "must_have[0]", "must_have[1]", "must_not[0]", "must_not[1]", "must_not[2]",
                   "grounding.allowed_sources[0]", "recovery.missing_information", "recovery.no_approved_source",
                   "recovery.tool_failure"]
    text = CONTRACT.read_text(encoding="utf-8")
    by_id = {e["id"]: e for e in model["elements"]}
    forbidden = by_id["must_not[0]"]
    line = lines_of(text, "索取用户当前密码")
    assert forbidden["criterion"] == "must_not" and forbidden["label"] == "索取用户当前密码"
    assert (forbidden["location"]["line"], forbidden["location"]["column"]) == (line, text.splitlines()[line - 1]
                                                                                .index("索取") + 1)
    assert forbidden["span"]["quote"] == "索取用户当前密码" and forbidden["span"]["line_start"] == line
    assert forbidden["severity"] == "high" and forbidden["status"] == "stated"  # the contract's own severity
    tool = by_id["recovery.tool_failure"]
    assert tool["label"] == "说明暂时无法完成并转人工" and tool["location"]["line"] == lines_of(text, "tool_failure:")
    assert by_id["grounding.allowed_sources[0]"]["label"] == "account-recovery-v3"
    assert by_id["intent_if_exposed"]["label"] == "PASSWORD_RESET"


def test_mbt_check_passes_the_seed_contract_and_verifies_every_span_against_the_file_itself():
    done = run_mbt("check", CONTRACT, "--format", "json", cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert not [f for f in report["findings"] if f["severity"] in ("error", "warning")], report["findings"]


def coverage(*args):
    done = run_mbt("coverage", *args, "--format", "json", cwd=ROOT)
    return done, json.loads(done.stdout) if done.stdout.strip().startswith("{") else None


def rows_of(report, model="password-reset-v1"):
    (found,) = [m for m in expanded(report)["models"] if m["model"] == model]
    return {row["element"]["id"]: row for row in found["elements"]}


def test_seed_goldens_verify_the_items_they_check_and_the_gate_watches_the_unchecked_must_not():
    """Seed 000's cases that name the contract: INT-00x verify the intent, ACC-REC-001 the must_have items (its
    phrases, judged by the embedded judge), must_not[0] ("索取当前密码"), must_not[1] ("声称已经重置": both describe
    claiming the account was changed), the allowed source and recovery.tool_failure (its `recovery` text names a
    tool failure); must_not[2] is checked by no case, so the default gate fails on it."""
    done, report = coverage("--model", CONTRACT, "--goldens", ROOT / "models" / "goldens")
    assert done.returncode == 1, done.stderr
    rows = rows_of(report)
    verified = {i: sorted(r["verified_by"]) for i, r in rows.items()}
    assert verified["intent_if_exposed"][:4] == ["ACC-REC-001", "INT-001", "INT-002", "INT-003"]
    assert "ACC-REC-001" in verified["must_have[0]"] and "ACC-REC-001" in verified["must_have[1]"]
    assert "ACC-REC-001" in verified["must_not[0]"] and "ACC-REC-001" in verified["must_not[1]"]
    assert verified["must_not[2]"] == [] and rows["must_not[2]"]["exercised_by"]
    assert verified["grounding.allowed_sources[0]"] == ["ACC-REC-001"]
    assert verified["recovery.tool_failure"] == ["ACC-REC-001"]
    assert verified["recovery.no_approved_source"] == [] == verified["recovery.missing_information"]
    # TOOL-FAIL-00x fire `tool_failed`: they exercise recovery.tool_failure without checking it
    assert "TOOL-FAIL-002" in rows["recovery.tool_failure"]["exercised_by"]
    gate = report["gate"]
    assert not gate["passed"]
    (forbidden,) = [f for f in gate["failures"] if f["rule"] == "forbidden_uncovered"]
    assert forbidden["elements"] == ["must_not[2]"]
    notes = [n["message"] for n in report["notes"]]
    assert any("`must_not` '索取当前密码' verifies must_not[0] '索取用户当前密码' of contract password-reset-v1 "
               "(judge embedded:" in n for n in notes)
    assert any("`must_not` 'ask for the current password' verifies must_not[0]" in n and "both describe asking for a "
               "password" in n for n in notes)
    # the keys the contract reads are no longer "not checked"
    assert not [n for n in notes if "ACC-REC-001" in n and ("`recovery` is not checked" in n or "`allowed_source`"
                                                            " is not checked" in n)]
    # a phrase the embedded judge cannot place checks nothing, and the note says so
    assert any("`must_not` '继续回复用户': the embedded judge is not sure whether it names must_not[0]" in n
               for n in notes)


SEED = CONTRACT.read_text(encoding="utf-8")


@pytest.mark.parametrize("text, line, column, message", [
    ("- id: x\n- must_not: [a]\n", 1, 1, "a contract must be a mapping, not a list"),
    ("id: x\nmust_have:\n  - fine\n  - {say: this}\n", 4, 5, "`must_have[1]` must be text, not a mapping"),
    ("id: x\nmust_not:\n  - 42\n", 3, 5, "`must_not[0]` must be text, not a number"),
    ("id: x\nmust_not: ask for a password\n", 2, 11, "`must_not` must be a list of texts, not text"),
    ("id: x\nmust_nto:\n  - a\n", 2, 1, "the contract: unknown key `must_nto` (did you mean `must_not`?)"),
    ("severity: high\nmust_not:\n  - a\n", 1, 1, "the contract has no `id`"),
    ("id: x\nseverity: urgent\nmust_not: [a]\n", 2, 11, "unknown severity `urgent`"),
    ("id: x\nmust_not: [a]\nmust_not: [b]\n", 3, 1, "a contract: `must_not` is given twice (first at line 2)"),
    ("id: x\nmust_not: [a\n", 3, 1, "not valid YAML"),
    ("", 1, 1, "the contract is empty"),
    ("id: x\nmust_not: [a]\n---\nid: y\n", 4, 1, "a contract file holds one YAML document"),
    ("id: x\ngrounding:\n  sources: [a]\n", 3, 3, "`grounding`: unknown key `sources`"),
    ("id: x\nrecovery:\n  tool_failure: ''\n", 3, 17, "`recovery.tool_failure` is empty"),
    ("id: [x]\nmust_not: [a]\n", 1, 5, "`id` must be text, not a list"),
    ("id: x\nmust_not: " + "[" * 5000 + "]" * 5000 + "\n", 1, 1, "the YAML is nested too deep to be a contract"),
    ("id: x\x00\n", 1, 1, "this is a binary file, not a text file"),
])
def test_a_bad_contract_is_one_located_message_and_exit_2(tmp_path, text, line, column, message):
    path = tmp_path / "contract.yaml"
    path.write_text(text, encoding="utf-8")
    for command in (("check", path), ("elements", "--model", path)):
        done = run_mbt(*command, cwd=tmp_path)
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        first = done.stderr.splitlines()[0]
        assert first.startswith(f"{path}:{line}:{column}: error: ") and message in first, first


def test_keys_starting_with_x_are_the_authors_own_and_a_quoted_item_keeps_its_span(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text('id: c1\nx-owner: support-team\nmust_not:\n  - "ask for\\u0020the password"\n  - \'say "done"\'\n',
                    encoding="utf-8")
    done = run_mbt("check", path, "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["findings"] == []
    (model,) = json.loads(run_mbt("elements", "--model", path, "--format", "json", cwd=tmp_path).stdout)["models"]
    escaped, quoted = model["elements"]
    assert escaped["label"] == "ask for the password" and escaped["span"]["quote"] is None  # cited by its line alone
    assert quoted["span"]["quote"] == 'say "done"' and quoted["span"]["line_start"] == 5


def test_a_folder_of_models_picks_the_contract_up_by_content_and_no_golden_or_gate_file():
    from mbt.parsing.contract import looks_like_contract
    from mbt.parsing.loader import expand_paths

    found = [str(p.relative_to(ROOT)) for p in expand_paths([str(ROOT / "models")])]
    assert "models/contracts/password-reset.yaml" in found
    assert not [p for p in found if p.endswith((".yaml", ".yml")) and "contracts/" not in p]
    for path in [*(ROOT / "models" / "goldens").rglob("*.y*ml"), *(ROOT / "models" / "gates").rglob("*.y*ml")]:
        assert not looks_like_contract(path.read_text(encoding="utf-8")), path
    assert looks_like_contract(SEED)
    # golden-shaped mappings are never contracts, however contract-like their keys
    assert not looks_like_contract("id: A\nturns:\n  - user: hi\nmust_not: [x]\n")
    assert not looks_like_contract("id: A\ncontract: password-reset-v1\nmust_have: [x]\n")
    assert not looks_like_contract("- id: A\n  must_not: [x]\n")
    assert not looks_like_contract("id: A\nseverity: high\n")  # nothing a contract says
    done = run_mbt("check", "models/", cwd=ROOT)
    assert done.returncode == 0 and "mbt check: 8 files, 8 models" in done.stdout


def test_a_positional_contract_is_a_model_and_render_draws_it_as_a_table(tmp_path):
    done = run_mbt("coverage", CONTRACT, ROOT / "models" / "goldens" / "single-turn.jsonl", "--no-gate",
                   "--format", "json", cwd=ROOT)
    report = json.loads(done.stdout)
    assert [m["model"] for m in report["models"]] == ["password-reset-v1"] and report["goldens"]["read"] == 4
    out = tmp_path / "contract.md"
    drawn = run_mbt("render", "--model", CONTRACT, "--goldens", ROOT / "models" / "goldens" / "single-turn.jsonl",
                    "-o", out, cwd=ROOT)
    assert drawn.returncode == 0, drawn.stderr
    text = out.read_text(encoding="utf-8")
    assert "must_not[0]" in text and "索取用户当前密码" in text and "INT-001" in text


def test_the_kind_has_no_grammar_and_the_registry_checks_which_way_a_kind_is_read():
    import dataclasses

    from mbt import kind as kinds
    from mbt.parsing.grammar import grammar_text

    contract = kinds.support("contract")
    assert not contract.has_grammar and contract.file_format is not None
    assert "contract" not in [k.kind for k in kinds.grammar_kinds()]
    assert "contract_model" not in grammar_text() and "fsm_model" in grammar_text()
    with pytest.raises(ValueError, match="read from its own file format: it takes no `keyword`"):
        kinds.register(dataclasses.replace(contract, keyword="contract"))
    fsm = kinds.support("fsm")
    with pytest.raises(ValueError, match="a DSL kind gives `grammar`"):
        kinds.register(dataclasses.replace(fsm, kind="broken", grammar=None))
    assert kinds.support("contract") is contract and "broken" not in [k.kind for k in kinds.all_kinds()]


def test_only_cases_naming_the_contract_are_its_own(tmp_path):
    goldens = tmp_path / "g.jsonl"
    cases = [{"id": "A", "contract": "password-reset-v1", "input": "hi", "expected_intent": "PASSWORD_RESET"},
             {"id": "B", "model": "password-reset-v1", "turns": [{"user": "hi"}],
              "assertions": {"allowed_source": ["account-recovery-v3"]}},
             {"id": "C", "input": "hi", "expected_intent": "PASSWORD_RESET"},
             {"id": "D", "contract": "password-reset-v1", "turns": [{"user": "hi"}],
              "assertions": {"allowed_source": "account-recovery-v1"}},
             {"id": "E", "contract": "password-reset-v1", "turns": [{"user": "hi"}],
              "assertions": {"must_have": ["索取当前密码"]}},
             {"id": "F", "contract": "password-reset-v1", "turns": [{"user": "hi"}],
              "recovery": {"tool_failure": "说明暂时无法完成并转人工", "power_cut": "wait"}}]
    goldens.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
    done, report = coverage("--model", CONTRACT, "--goldens", goldens)
    rows = rows_of(report)
    assert rows["intent_if_exposed"]["verified_by"] == ["A"]
    assert rows["grounding.allowed_sources[0]"]["verified_by"] == ["B"]  # `model: ID` names it too
    assert "C" not in {g for r in rows.values() for g in r["exercised_by"]}  # names no contract: not its case
    (wrong_source, situation) = report["contradictions"]
    assert (wrong_source["case"], wrong_source["path"]) == ("D", "allowed_source")
    assert "does not list in grounding.allowed_sources" in wrong_source["message"]
    assert (situation["case"], situation["path"]) == ("F", "recovery.power_cut")
    # F disagrees with the contract, so it verifies nothing, not even the situation it names rightly
    assert rows["recovery.tool_failure"]["verified_by"] == []
    (forbidden,) = report["forbidden_expected"]  # E expects what must_not[0] forbids
    assert (forbidden["case"], forbidden["element"]) == ("E", "must_not[0]")
    assert rows["must_have[0]"]["verified_by"] == [] == rows["must_have[1]"]["verified_by"]
    assert done.returncode == 1


def test_the_keys_the_contract_reads_are_not_noted_where_it_takes_the_case(tmp_path):
    goldens = tmp_path / "g.jsonl"
    case = {"id": "G", "contract": "password-reset-v1", "recovery": "tool_failure",
            "turns": [{"user": "hi", "allowed_source": "account-recovery-v3", "mood": "calm"}],
            "assertions": {"allowed_source": "account-recovery-v3"}}
    goldens.write_text(json.dumps(case) + "\n", encoding="utf-8")
    _, report = coverage("--model", CONTRACT, "--goldens", goldens)
    notes = [n["message"] for n in report["notes"]]
    assert notes == ["turn 1: `mood` is not checked (mbt does not read this key)"]
    rows = rows_of(report)
    assert rows["recovery.tool_failure"]["verified_by"] == ["G"] == rows["grounding.allowed_sources[0]"]["verified_by"]
    # the recovery model alone reads none of them
    _, alone = coverage("--model", ROOT / "models" / "recovery.fsm", "--goldens", goldens)
    said = " ".join(n["message"] for n in alone["notes"])
    assert "`recovery` is not checked" in said and "`allowed_source` is not checked" in said
