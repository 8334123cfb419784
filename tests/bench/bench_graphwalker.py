"""Benchmark of GraphWalker import and suites: a GraphWalker-style JSON model, imported, checked and toured.

    python tests/bench/bench_graphwalker.py            # 5,000 vertices / 50,000 edges
    python tests/bench/bench_graphwalker.py --quick    # 200 / 2,000: a smoke run
    python tests/bench/bench_graphwalker.py --size 1000 10000

The model is what GraphWalker users write: vertices `v_N` on a ring (so it is strongly connected) plus random edges,
edge names from a small pool so that many vertices have two or more same-named edges leaving them (each becomes an
event of its own), a counter `tries` that a few guarded edges increment (`tries < 3` / `tries++`) and one edge needs
(`tries >= 2`), and a boolean flag a few edges toggle and a few guards read. It prints the import time at a quarter,
half and all of the size (linear import: the time per element stays flat), the full size again minified (every
element on line 1: spans and notes with columns) and split into two files linked by a shared state, `mbt check`'s
time, and the `--all`
transition suite's time, steps and tests beside the lower bound (one step per edge) and the guard-free flow optimum.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout without installing

from mbt import api  # noqa: E402
from mbt.importers.graphwalker import import_graphwalker, import_graphwalker_files  # noqa: E402

FULL = (5000, 50_000)
QUICK = (200, 2000)


def graphwalker_model(vertices: int, edges: int, seed: int = 7) -> dict:
    rnd = random.Random(seed)
    names = [f"e_Action{k}" for k in range(max(4, vertices // 10))]  # few names: same-named edges are common
    out_edges = []
    for i in range(vertices):
        out_edges.append((i, (i + 1) % vertices))  # the ring
    while len(out_edges) < edges:
        out_edges.append((rnd.randrange(vertices), rnd.randrange(vertices)))
    json_edges = []
    for k, (u, v) in enumerate(out_edges):
        edge = {"id": f"e{k}", "name": rnd.choice(names), "sourceVertexId": f"n{u}", "targetVertexId": f"n{v}"}
        json_edges.append(edge)
    # A few guards: a bounded counter, a flag.
    for k in rnd.sample(range(vertices, len(json_edges)), 6):
        json_edges[k].update(guard="tries < 3", actions=["tries++;"])
    for k in rnd.sample(range(vertices, len(json_edges)), 2):
        json_edges[k]["guard"] = "tries >= 2"
    for k in rnd.sample(range(vertices, len(json_edges)), 4):
        json_edges[k]["actions"] = ["flag = !flag;"]
    for k in rnd.sample(range(vertices, len(json_edges)), 4):
        json_edges[k]["guard"] = "flag"
    return {"name": "Bench", "models": [{
        "name": "Bench", "id": "m", "startElementId": "n0", "actions": ["tries = 0;", "flag = false;"],
        "generator": "random(edge_coverage(100))",
        "vertices": [{"id": f"n{i}", "name": f"v_{i}", "requirements": [f"REQ-{i % 50}"] if i % 7 == 0 else []}
                     for i in range(vertices)],
        "edges": json_edges}]}


def linked_halves(graph: dict, folder: Path) -> list[Path]:
    """The model as two files (GraphWalker's `-m a.json -m b.json`): the second half of the edges in a model of its
    own, its vertices the edges' ends, each vertex of both files shared (`sharedState` = its name)."""
    (model,) = graph["models"]
    half = len(model["edges"]) // 2
    first = dict(model, edges=model["edges"][:half],
                 vertices=[dict(v, sharedState=v["name"]) for v in model["vertices"]])
    ends = {e[k] for e in model["edges"][half:] for k in ("sourceVertexId", "targetVertexId")}
    second = {"name": "Second", "id": "m2", "edges": model["edges"][half:],
              "vertices": [dict(v, sharedState=v["name"]) for v in model["vertices"] if v["id"] in ends]}
    paths = [folder / "half-1.json", folder / "half-2.json"]
    for path, part in zip(paths, (first, second)):
        path.write_text(json.dumps({"name": part["name"], "models": [part]}, indent=1), encoding="utf-8")
    return paths


def timed(func, *args, **kwargs):
    start = time.perf_counter()
    result = func(*args, **kwargs)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 vertices / 2,000 edges")
    parser.add_argument("--size", nargs=2, type=int, metavar=("VERTICES", "EDGES"), help="another size")
    args = parser.parse_args()
    vertices, edges = tuple(args.size) if args.size else QUICK if args.quick else FULL
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"GraphWalker model: {vertices:,} vertices, {edges:,} edges (ring + random, same-named edges, guards)")
        print("import (mbt.importers.graphwalker.import_graphwalker, JSON -> DSL, read back):")
        for part in (4, 2, 1):
            v, e = vertices // part, edges // part
            path = folder / f"bench-{part}.json"
            path.write_text(json.dumps(graph := graphwalker_model(v, e), indent=1), encoding="utf-8")
            imported, seconds = timed(import_graphwalker, path)
            print(f"  {v:>6,} vertices / {e:>7,} edges: {seconds:7.2f} s  "
                  f"({seconds / (v + e) * 1e6:6.1f} µs per element, {path.stat().st_size / 1e6:5.1f} MB, "
                  f"{len(imported.notes)} notes)")
        minified = folder / "bench-min.json"
        minified.write_text(json.dumps(graph, separators=(",", ":")), encoding="utf-8")
        _, seconds = timed(import_graphwalker, minified)
        print(f"  minified, one line: {seconds:7.2f} s  ({seconds / (vertices + edges) * 1e6:6.1f} µs per element)")
        paths = linked_halves(graph, folder)
        imported_two, seconds = timed(import_graphwalker_files, paths)
        print(f"  two files linked by a shared state: {seconds:7.2f} s  "
              f"({seconds / (vertices + edges) * 1e6:6.1f} µs per element, {len(imported_two.models)} model)")
        del graph
        path = folder / "bench-1.json"
        same = sum(1 for line in imported.text.splitlines() if line.startswith("  event ") and "_e" in line)
        print(f"  events of their own (same-named edges leaving one vertex): {same:,}")
        report, seconds = timed(api.check, [str(path)])
        errors = sum(1 for f in report.findings if f.severity == "error")
        print(f"mbt check: {seconds:7.2f} s  ({len(report.findings)} findings, {errors} errors)")
        generated, seconds = timed(api.generate, [str(path)], [], str(folder / "out"), suite="transition")
        s = generated.models[0].suite
        print(f"--all transition suite: {seconds:7.2f} s")
        print(f"  lower bound (one step per edge to cover): {s.lower_bound:,} of {s.elements:,}")
        print(f"  guard-free optimum (min-cost flow, {s.method}): {s.optimum_steps:,} steps in {s.optimum_tests:,} "
              "tests")
        print(f"  suite respecting guards: {s.steps:,} steps in {s.tests:,} tests  "
              f"({s.steps / s.optimum_steps:.4f}x the flow optimum, {s.steps / s.lower_bound:.4f}x the lower bound"
              f"{', exact' if s.exact else ''}; {len(generated.models[0].missing)} without a witness)")


if __name__ == "__main__":
    main()
