"""Reading the JSON coverage report (schema 3.0) back whole: the rule of docs/user-guide.md ("The JSON report"),
written out independently of mbt/report/jsonout.py; tests that read rows from a written report expand it first."""

from __future__ import annotations

# The documented columns of an element's row, in order, and what a left-out cell at a row's end holds: its default,
# or (None here) what the row's id and model say (docs/user-guide.md, "The JSON report").
COLUMNS = ("id", "label", "line", "column", "exercised_by", "verified_by", "exercised_more", "verified_more",
           "severity", "weight", "span", "status", "feasible", "reason", "tags", "criterion", "file", "model", "kind")
DEFAULTS = {"exercised_by": [], "verified_by": [], "exercised_more": 0, "verified_more": 0, "severity": "medium",
            "weight": 2.0, "span": None, "status": "inferred", "feasible": True, "reason": None, "tags": []}
ALWAYS = 4  # id, label, line, column


def cells(row: list, model: dict) -> dict:
    """A row's cells by column name, the left-out ones filled in."""
    assert ALWAYS <= len(row) <= len(COLUMNS)
    named = dict(zip(COLUMNS, row))
    inferred = {**DEFAULTS, "criterion": row[0].split(":")[0], "file": model["file"], "model": model["model"],
                "kind": model["kind"]}
    return {name: named[name] if name in named else inferred[name] for name in COLUMNS}


def expanded(document: dict) -> dict:
    """A 3.0 report with every row written out whole: the in-memory report's shape (schema 1.0). Another report
    (check's, which the same helpers read) has no golden_ids and is returned as it is."""
    if "golden_ids" not in document and not any("elements" in m for m in document.get("models", [])):
        return document  # a coverage report without golden_ids fails below
    out = dict(document)
    ids = out.pop("golden_ids")
    assert tuple(out.pop("element_columns")) == COLUMNS
    assert len(set(ids)) == len(ids)  # each golden once
    models = []
    for m in out["models"]:
        rows = []
        for row in m["elements"]:
            c = cells(row, m)
            element = {"id": c["id"], "model": c["model"], "kind": c["kind"], "criterion": c["criterion"],
                       "label": c["label"], "location": {"file": c["file"], "line": c["line"], "column": c["column"]}}
            element.update({name: c[name] for name in ("span", "status", "severity", "weight", "feasible", "reason",
                                                       "tags")})
            rows.append({"element": element,
                         "exercised_by": [ids[i] for i in c["exercised_by"]],
                         "verified_by": [ids[i] for i in c["verified_by"]],
                         "exercised_more": c["exercised_more"], "verified_more": c["verified_more"]})
        models.append({**m, "elements": rows})
    out["models"] = models
    return out
