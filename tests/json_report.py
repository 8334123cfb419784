"""Reading the JSON coverage report (schema 2.0) back whole: the rule of docs/user-guide.md ("The JSON report"),
written out independently of mbt/report/jsonout.py; tests that read rows from a written report expand it first."""

from __future__ import annotations

# The documented defaults of a row's element fields (docs/user-guide.md, "The JSON report").
DEFAULTS = {"span": None, "status": "inferred", "severity": "medium", "weight": 2.0, "feasible": True, "reason": None,
            "tags": []}


def expanded(document: dict) -> dict:
    """A 2.0 report with every row written out whole: the in-memory report's shape (schema 1.0). Another report
    (check's, which the same helpers read) has no golden_ids and is returned as it is."""
    if "golden_ids" not in document and not any("elements" in m for m in document.get("models", [])):
        return document  # a coverage report without golden_ids fails below
    out = dict(document)
    ids = out.pop("golden_ids")
    assert len(set(ids)) == len(ids)  # each golden once
    models = []
    for m in out["models"]:
        rows = []
        for row in m["elements"]:
            element = {"id": row["id"], "model": row.get("model", m["model"]), "kind": row.get("kind", m["kind"]),
                       "criterion": row.get("criterion", row["id"].split(":")[0]), "label": row["label"],
                       "location": {"file": row.get("file", m["file"]), "line": row["line"], "column": row["column"]}}
            element.update({name: row.get(name, default) for name, default in DEFAULTS.items()})
            rows.append({"element": element,
                         "exercised_by": [ids[i] for i in row.get("exercised_by", [])],
                         "verified_by": [ids[i] for i in row.get("verified_by", [])],
                         "exercised_more": row.get("exercised_more", 0),
                         "verified_more": row.get("verified_more", 0)})
        models.append({**m, "elements": rows})
    out["models"] = models
    return out
