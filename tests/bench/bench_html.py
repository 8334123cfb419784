"""Benchmark: `mbt coverage --format html` on a 300-state / 1,500-transition synthetic model, and `mbt --help`.

    python tests/bench/bench_html.py             # 300 states, 1,500 transitions, 2,000 goldens
    python tests/bench/bench_html.py --quick     # 100 states, 500 transitions, 500 goldens (a smoke run)

Both are the real command line run as a child process (wall time; best of --repeat for --help). The diagram of a
model this large is drawn in its bounded form (sfdp, edge labels on hover: mbt.render.dot.layout_for); the script
prints which form the report used and the time `dot` alone would need is not measured (it ran over 30 minutes).
Prints figures beside their targets; never asserts.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402

FULL = (300, 1500, 2000)
QUICK = (100, 500, 500)
TARGET_HTML_SECONDS = 60.0
TARGET_HELP_SECONDS = 0.5


def timed(args: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    return time.perf_counter() - start, done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=5, help="runs of `mbt --help` (the best is reported)")
    args = ap.parse_args(argv)
    states, transitions, goldens = QUICK if args.quick else FULL
    mbt = [sys.executable, "-m", "mbt"]
    with tempfile.TemporaryDirectory(prefix="mbt-bench-html-") as folder:
        out = Path(folder)
        model, golden, _ = synth.write_bench(out, states, transitions, goldens)
        seconds, done = timed([*mbt, "coverage", "--model", str(model), "--goldens", str(golden), "--no-gate",
                               "--format", f"html:{out / 'site'}"], out)
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
        page = next((out / "site").glob("model-*.html")).read_text(encoding="utf-8")
        form = ("bounded (sfdp)" if "drawn with sfdp" in page else "full (dot)") if "<svg" in page else \
            "none: " + ("layout time limit" if "took longer" in page else "no diagram")
        size = sum(p.stat().st_size for p in (out / "site").iterdir()) / 1e6
        help_times = [timed([*mbt, "--help"], out)[0] for _ in range(args.repeat)]
        script = Path(sys.executable).parent / "mbt"
        cli_times = [timed([str(script), "--help"], out)[0] for _ in range(args.repeat)] if script.exists() else []
    print(f"model: {states} states, {transitions} transitions; {goldens} goldens")
    print(f"mbt coverage --format html   {seconds:8.2f} s   (target < {TARGET_HTML_SECONDS:.0f} s)   "
          f"diagram: {form}; report {size:.1f} MB")
    print(f"python -m mbt --help         {min(help_times):8.3f} s   (target < {TARGET_HELP_SECONDS} s; best of "
          f"{len(help_times)})")
    if cli_times:
        print(f"mbt --help (console script)  {min(cli_times):8.3f} s   (best of {len(cli_times)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
