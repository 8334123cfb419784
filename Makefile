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

.PHONY: demo demo-agent test test-fast lint graphviz chromium postgresql generated native

demo: native graphviz
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
	@echo "== seed 000's contract as a model: mbt check, mbt coverage and mbt eval on models/contracts/"
	@$(BIN)/mbt check models/contracts/; code=$$?; [ $$code -lt 2 ]
	@mkdir -p build
	@$(BIN)/mbt eval --model models/contracts/ --goldens models/goldens/single-turn.jsonl \
	  --runs models/answers/contract-runs/ --format text --format json:build/contract-eval.json; code=$$?; \
	  echo "== mbt eval exited with $$code (1 = two answers violate a must_not, two are not judged by the embedded judge)"; \
	  [ $$code -lt 2 ]
	@$(BIN)/mbt coverage --model models/contracts/ --goldens $(DEMO_GOLDENS) --answers build/contract-eval.json; code=$$?; \
	  echo "== mbt coverage exited with $$code (1 = must_not[2] is checked by no golden: the default gate fails; the judged answers are shown beside)"; \
	  [ $$code -lt 2 ]
	@echo
	@echo "== mbt runs --model models/contracts/password-reset.yaml --runs models/traces/ --gate models/gates/seed-000-release.yaml (grounding)"
	@$(BIN)/mbt runs --model models/contracts/password-reset.yaml --runs models/traces/ \
	  --gate models/gates/seed-000-release.yaml; code=$$?; \
	  echo "== mbt runs exited with $$code (1 = one trace uses the expired document and invents a time limit)"; \
	  [ $$code -lt 2 ]
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
	@echo
	@$(MAKE) --no-print-directory demo-agent

# The live agent (docs/agents.md): mbt's reference machine of models/recovery.fsm served as an OpenAI-compatible chat
# endpoint, twice (the second with a fault), each on a free port in the background and killed at the end whatever
# happens (the shell's EXIT trap); `mbt eval --agent` drives each and keeps its result set in a SQLite store under
# build/agent/, then the two sets are compared and the faulty one exported for Excel.
AGENT_DIR := build/agent
AGENT_STORE := $(AGENT_DIR)/results.db
demo-agent: $(STAMP)
	@rm -rf $(AGENT_DIR) && mkdir -p $(AGENT_DIR)
	@echo "== mbt serve --model $(DEMO_MODEL) (and a second one with --fault wrong-argument), each on a free port"
	@$(BIN)/mbt serve --model $(DEMO_MODEL) --port 0 --url-file $(AGENT_DIR)/url >$(AGENT_DIR)/serve.log 2>&1 & good=$$!; \
	$(BIN)/mbt serve --model $(DEMO_MODEL) --port 0 --fault wrong-argument --url-file $(AGENT_DIR)/url-fault \
	  >$(AGENT_DIR)/serve-fault.log 2>&1 & bad=$$!; \
	trap 'kill $$good $$bad 2>/dev/null; wait $$good $$bad 2>/dev/null' EXIT; \
	for i in $$(seq 300); do [ -s $(AGENT_DIR)/url ] && [ -s $(AGENT_DIR)/url-fault ] && break; sleep 0.1; done; \
	[ -s $(AGENT_DIR)/url ] && [ -s $(AGENT_DIR)/url-fault ] || { echo "== mbt serve did not start:"; \
	  cat $(AGENT_DIR)/serve.log $(AGENT_DIR)/serve-fault.log; exit 1; }; \
	echo "== mbt eval --goldens models/answers/agent/ --agent openai-chat:$$(cat $(AGENT_DIR)/url) --model $(DEMO_MODEL) --save agent-baseline"; \
	$(BIN)/mbt eval --goldens models/answers/agent/ --agent openai-chat:$$(cat $(AGENT_DIR)/url) --model $(DEMO_MODEL) \
	  --record $(AGENT_DIR)/sessions-baseline --save agent-baseline --store $(AGENT_STORE); code=$$?; \
	echo "== mbt eval exited with $$code (0: every golden passes against the reference agent)"; [ $$code -lt 2 ] || exit $$code; \
	echo; \
	echo "== mbt eval ... --agent openai-chat:$$(cat $(AGENT_DIR)/url-fault) --save agent-wrong-argument --baseline-set agent-baseline"; \
	$(BIN)/mbt eval --goldens models/answers/agent/ --agent openai-chat:$$(cat $(AGENT_DIR)/url-fault) --model $(DEMO_MODEL) \
	  --record $(AGENT_DIR)/sessions-wrong-argument --save agent-wrong-argument --baseline-set agent-baseline \
	  --store $(AGENT_STORE); code=$$?; \
	echo "== mbt eval exited with $$code (1: the fault sends a wrong e-mail address to the reset tool)"; \
	[ $$code -lt 2 ] || exit $$code; \
	echo; \
	echo "== mbt results compare agent-baseline agent-wrong-argument"; \
	$(BIN)/mbt results compare agent-baseline agent-wrong-argument --store $(AGENT_STORE) || exit $$?; \
	$(BIN)/mbt results export agent-wrong-argument -o $(AGENT_DIR)/agent-wrong-argument.xlsx --store $(AGENT_STORE) \
	  || exit $$?; \
	$(BIN)/mbt results site $(AGENT_DIR)/results --store $(AGENT_STORE) || exit $$?; \
	echo "== wrote $(AGENT_STORE) (two result sets), the HTML viewer $(AGENT_DIR)/results/index.html, $(AGENT_DIR)/agent-wrong-argument.xlsx and the sessions in $(AGENT_DIR)/sessions-*/"

# The suite runs with the compiled build (when it could be made), then the run-reading gold tests and the --jobs and
# --engine dask tests again in pure Python, so that both stay tested.
test: native graphviz chromium postgresql
	$(BIN)/pytest -q
	MBT_PURE_PYTHON=1 $(BIN)/pytest -q tests/test_runs_reading_gold.py tests/test_runs_parallel.py \
	  tests/test_runs_compiled.py
	@if [ -f tests/bench/run_bench.py ]; then $(BIN)/python tests/bench/run_bench.py --quick; fi
	@if [ -f tests/bench/bench_tables.py ]; then $(BIN)/python tests/bench/bench_tables.py --quick; fi
	@if [ -f tests/bench/bench_generate.py ]; then $(BIN)/python tests/bench/bench_generate.py --quick --no-guards; fi
	@if [ -f tests/bench/bench_runs.py ]; then $(BIN)/python tests/bench/bench_runs.py --quick; fi
	@if [ -f tests/bench/bench_decode.py ]; then $(BIN)/python tests/bench/bench_decode.py --quick; fi
	@if [ -f tests/bench/bench_llm.py ]; then $(BIN)/python tests/bench/bench_llm.py --quick; fi
	@if [ -f tests/bench/bench_eval.py ]; then $(BIN)/python tests/bench/bench_eval.py --quick; fi
	@if [ -f tests/bench/bench_html.py ]; then $(BIN)/python tests/bench/bench_html.py --quick; fi
	@if [ -f tests/bench/bench_store.py ]; then $(BIN)/python tests/bench/bench_store.py --quick; fi
	@if [ -f tests/bench/bench_viewer.py ]; then $(BIN)/python tests/bench/bench_viewer.py --quick; fi

# Everything but the browser and packaging tests (marked `slow`): the quick loop while developing.
test-fast: native graphviz postgresql
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
	$(BIN)/python -m mbt.native_build
	touch $@

# The optional compiled build of mbt/runs' hot modules (mypyc, from the dev extra; docs/runs.md "Scale"): remade when
# any source of mbt changed since (mbt uses it only while it matches them all), a no-op otherwise. Without a C
# compiler it prints that mbt runs in pure Python, and goes on.
native: $(STAMP)
	@$(BIN)/python -m mbt.native_build

# The browser test opens the HTML report in headless Chromium (Debian's package `chromium`).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "== installing the OS package chromium (the test suite opens the HTML report in a real browser)"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

# The result store's tests run on SQLite and on a PostgreSQL server they start themselves (initdb into a temporary
# folder; tests/pg_server.py), from Debian's package `postgresql`, whose programs live in /usr/lib/postgresql/N/bin.
postgresql:
	@command -v pg_ctl >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || { \
	  echo "== installing the OS package postgresql (the result store's tests start a throwaway server)"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql; }

# Not a file: checked on every run, and a no-op once `dot` is on the PATH.
graphviz:
	@command -v dot >/dev/null 2>&1 || { \
	  echo "== installing the OS package graphviz (the dot program draws mbt's diagrams)"; \
	  $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q graphviz; }
