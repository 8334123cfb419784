# Two targets for people: `make demo` runs the shipped example, `make test` runs every test.
# Both work from nothing on a fresh Debian machine: they create .venv, install mbt into it, and install
# the OS package graphviz (the `dot` program) when it is missing. Re-running reuses what is there.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Re-install only when pyproject.toml (the dependency list) is newer than the last install.
STAMP := $(VENV)/.installed-from-pyproject
# apt-get needs root; use sudo only when we are not root already.
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
DEMO_MODEL := models/recovery.fsm
DEMO_GOLDENS := models/goldens/
DEMO_GATE := models/gates/release.yaml
# Seed 000's gates/release.yaml, unchanged: `mbt runs` gates observed runs with it.
RUNS_GATE := models/gates/seed-000-release.yaml

.PHONY: demo test test-fast lint graphviz chromium generated

demo: $(STAMP) graphviz
	@echo "== mbt check models/"
	@$(BIN)/mbt check models/; code=$$?; echo "== mbt check exited with $$code"; [ $$code -lt 2 ]
	@echo
	@echo "== mbt coverage --model $(DEMO_MODEL) --goldens $(DEMO_GOLDENS) --gate $(DEMO_GATE)"
	@$(BIN)/mbt coverage --model $(DEMO_MODEL) --goldens $(DEMO_GOLDENS) --gate $(DEMO_GATE); code=$$?; \
	  echo "== mbt coverage exited with $$code (1 = the release gate failed, which the example is built to show)"; \
	  [ $$code -lt 2 ]
	@echo
	@echo "== mbt runs --model models/orders.fsm --runs models/runs/ --goldens models/goldens/orders/ --gate $(RUNS_GATE) --regressions build/regressions"
	@mkdir -p build
	@$(BIN)/mbt runs --model models/orders.fsm --runs models/runs/ --goldens models/goldens/orders/ \
	  --gate $(RUNS_GATE) --regressions build/regressions; code=$$?; \
	  echo "== mbt runs exited with $$code (1 = seed 000's release gate failed: the example's runs deviate on purpose)"; \
	  [ $$code -lt 2 ]
	@echo
	@echo "== mbt eval --goldens models/answers/goldens/ --runs models/answers/runs/ --format text --format xlsx:build/eval.xlsx (the agent's answers judged)"
	@mkdir -p build
	@$(BIN)/mbt eval --goldens models/answers/goldens/ --runs models/answers/runs/ \
	  --format text --format xlsx:build/eval.xlsx; code=$$?; \
	  echo "== mbt eval exited with $$code (1 = two wrong answers and an unanswered case, as the example is built); wrote build/eval.xlsx"; \
	  [ $$code -lt 2 ]
	@echo
	@echo "== mbt judge calibrate --labels models/answers/labels.jsonl (the judge against human labels)"
	@$(BIN)/mbt judge calibrate --labels models/answers/labels.jsonl; code=$$?; [ $$code -lt 2 ]
	@echo
	@echo "== mbt judge sensitivity --goldens models/answers/goldens/ (does the judge catch wrong answers?)"
	@$(BIN)/mbt judge sensitivity --goldens models/answers/goldens/; code=$$?; [ $$code -lt 2 ]
	@echo
	@echo "== mbt mutate --model models/ --goldens models/goldens/ --show-survivors none (is the golden set good?)"
	@$(BIN)/mbt mutate --model models/ --goldens models/goldens/ --show-survivors none; code=$$?; [ $$code -lt 2 ]
	@echo
	@echo "== every example model side by side, with an HTML report and a coverage-painted diagram"
	@mkdir -p build
	@$(BIN)/mbt coverage --model models/ --goldens models/goldens/ --no-gate \
	  --format markdown:build/mbt-coverage.md --format html:build/mbt-report; code=$$?; [ $$code -lt 2 ]
	@$(BIN)/mbt render --model $(DEMO_MODEL) --goldens $(DEMO_GOLDENS) -o build/recovery.svg
	@echo "== wrote build/mbt-report/index.html (open it in a browser), build/mbt-coverage.md and build/recovery.svg"

test: $(STAMP) graphviz chromium
	$(BIN)/pytest -q
	@if [ -f tests/bench/run_bench.py ]; then $(BIN)/python tests/bench/run_bench.py --quick; fi
	@if [ -f tests/bench/bench_tables.py ]; then $(BIN)/python tests/bench/bench_tables.py --quick; fi
	@if [ -f tests/bench/bench_generate.py ]; then $(BIN)/python tests/bench/bench_generate.py --quick --no-guards; fi
	@if [ -f tests/bench/bench_runs.py ]; then $(BIN)/python tests/bench/bench_runs.py --quick; fi
	@if [ -f tests/bench/bench_decode.py ]; then $(BIN)/python tests/bench/bench_decode.py --quick; fi
	@if [ -f tests/bench/bench_llm.py ]; then $(BIN)/python tests/bench/bench_llm.py --quick; fi
	@if [ -f tests/bench/bench_html.py ]; then $(BIN)/python tests/bench/bench_html.py --quick; fi

# Everything but the browser and packaging tests (marked `slow`): the quick loop while developing.
test-fast: $(STAMP) graphviz
	$(BIN)/pytest -q -m "not slow"

# ruff (pyflakes, pycodestyle, isort, bugbear, pyupgrade) on the code and the tests; mypy on the whole package with
# the project's configuration (pyproject.toml); lint-imports, the floors of docs/architecture.md as
# [tool.importlinter] in pyproject.toml declares them.
lint: $(STAMP)
	$(BIN)/ruff check mbt tests
	$(BIN)/mypy mbt
	$(BIN)/lint-imports

# The committed output of `mbt generate` for the example (generated/README.md; a test fails when it is stale).
GENERATED_GOLDENS := $(addprefix --goldens models/goldens/,broken.jsonl golden.jsonl multi-turn.yaml \
	recovery-flows.yaml single-turn.jsonl tool-failures.jsonl)
generated: $(STAMP)
	$(BIN)/mbt generate --model $(DEMO_MODEL) $(GENERATED_GOLDENS) --out generated
	$(BIN)/mbt generate --model $(DEMO_MODEL) --all --criterion transition --out generated

# Debian's python3 makes virtualenvs only with its python3-venv package: install it when the first try fails.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "== installing the OS package python3-venv (python3 -m venv needs it on Debian)"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv && \
	  $(PYTHON) -m venv $(VENV); }

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --disable-pip-version-check -q -e '.[test,dev]'
	touch $@

# The browser test opens the HTML report in headless Chromium (Debian's package `chromium`).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "== installing the OS package chromium (the test suite opens the HTML report in a real browser)"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

# Not a file: checked on every run, and a no-op once `dot` is on the PATH.
graphviz:
	@command -v dot >/dev/null 2>&1 || { \
	  echo "== installing the OS package graphviz (the dot program draws mbt's diagrams)"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q graphviz; }
