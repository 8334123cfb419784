"""Progress on stderr on a terminal only: never in machine output, never in a pipe or with -q."""

from __future__ import annotations

from pathlib import Path

from tests.cli_runner import run_mbt

ROOT = Path(__file__).resolve().parents[1]


def run_with_terminal_stderr(*args: str) -> tuple[str, str, int]:
    """stdout to a pipe (machine output), stderr to a pseudo-terminal (where a person watches)."""
    done = run_mbt(*args, cwd=ROOT, terminal=True)
    return done.stdout, done.stderr, done.returncode


def test_a_terminal_sees_progress_and_the_report_stays_clean(tmp_path):
    out, err, code = run_with_terminal_stderr("coverage", "--model", "models/", "--goldens", "models/goldens/",
                                              "--no-gate", "--format", "json", "--format", f"html:{tmp_path / 'h'}")
    assert code == 0
    assert "goldens" in err and "diagrams" in err and "%" in err  # tqdm's bars
    import json

    assert json.loads(out)["goldens"]["read"] > 0  # stdout is the report alone


def test_no_progress_in_a_pipe_or_with_quiet(tmp_path):
    piped = run_mbt("coverage", "--model", "models/recovery.fsm", "--goldens", "models/goldens/", cwd=ROOT)
    assert "goldens:" not in piped.stderr and "it/s" not in piped.stderr and "B/s" not in piped.stderr
    _, err, _ = run_with_terminal_stderr("coverage", "--model", "models/recovery.fsm", "--goldens",
                                         "models/goldens/", "-q")
    assert "B/s" not in err and "goldens:" not in err


def test_mutate_and_generate_show_progress_on_a_terminal_only(tmp_path):
    out, err, code = run_with_terminal_stderr("mutate", "--model", "models/refund.dt", "--goldens", "models/goldens/",
                                              "--format", "json")
    assert code == 0 and "model/s" in err and "%" in err  # tqdm's bar of the models done
    import json

    assert json.loads(out)["models"], "stdout is the report alone"
    _, err, code = run_with_terminal_stderr("generate", "--model", "models/refund.dt", "--goldens", "models/goldens/",
                                            "--out", str(tmp_path / "gen"))
    assert code == 0 and "model/s" in err and "%" in err  # tqdm's bar of the models done
    piped = run_mbt("mutate", "--model", "models/refund.dt", "--goldens", "models/goldens/", cwd=ROOT)
    assert piped.returncode == 0 and "%|" not in piped.stderr and "model/s" not in piped.stderr
