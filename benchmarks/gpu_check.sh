#!/usr/bin/env bash
# The GPU check: on a machine with a CUDA GPU, from the repository root,
#
#   OUT=/some/folder bash benchmarks/gpu_check.sh            # everything below, logs and JSON into $OUT
#   OUT=/tmp/x PYTHON=.venv/bin/python bash benchmarks/gpu_check.sh --quick --device cpu   # the script's own check
#
# 1. when `import snakemake` fails, adds the packages wobble needs that the machine lacks: .gpu/site.tar.xz (those
#    packages installed for the machine's Python with `pip install --target`, debug info stripped, packed) or else
#    the wheels in .whl/ (pip install --target, no index); wobble itself runs from src/ (PYTHONPATH);
# 2. starts the workflow end to end on configs/smoke.yaml (tiny random models; every model job on the GPU, as
#    `device: auto` picks it) in a scratch copy, the data mirror from ../shared/data or .gpu/data.tar.xz, for at
#    most GPU_CHECK_SMOKE_S seconds (default 240), and checks that every study's tables, figures and ledger came
#    out;
# 3. beside it, runs the CUDA tests (tests/backends/test_cuda.py, the tests that skip with "no CUDA device", and the
#    finetune's output-layer test, whose Trainer takes the GPU) with skip reasons; then, where vllm is installed,
#    the in-process vLLM engine against the hf backend (benchmarks/vllm_check.py);
# 4. then, alone on the machine, times the engine on the four studies' workloads (benchmarks/gpu_throughput.py,
#    workloads from .gpu/workloads.json.gz, written by its `prepare` step on a machine with a finished default
#    run) until the whole check has taken GPU_CHECK_BUDGET_S seconds (default 400); GPU_CHECK_ONLY="icl_bias ..."
#    times only those studies' workloads.
# --quick: 4 items per workload, 1 timed run. --device: the throughput's device (default cuda).
set -uo pipefail
OUT=${OUT:-/tmp/gpu-check}
PY=${PYTHON:-python3}
case $PY in */*) PY=$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY") ;; esac  # the smoke run starts elsewhere
QUICK=()
DEVICE=cuda
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=(--quick) ;;
    --device) DEVICE=$2; shift ;;
    *) echo "gpu_check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
REPO=$(pwd)
mkdir -p "$OUT"
START=$(date +%s)
say() { echo "[gpu_check $(( $(date +%s) - START ))s] $*" | tee -a "$OUT/check.log"; }
status=0

# 1. packages
say "machine: $(nproc) cores; $(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
if ! $PY -c "import snakemake" 2>/dev/null; then
  mkdir -p /tmp/site
  if [ -f .gpu/site.tar.xz ]; then
    tar -xJf .gpu/site.tar.xz -C /tmp/site || { say "unpacking .gpu/site.tar.xz failed"; exit 1; }
  else
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
      || { say "wheel install failed"; exit 1; }
  fi
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$REPO/src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
say "python $($PY -c 'import sys, torch, transformers; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__, "gpu", torch.cuda.is_available())')"

# 2. the workflow on configs/smoke.yaml, in the background
WORK=/tmp/gpu-check-smoke
rm -rf "$WORK"
mkdir -p "$WORK/work"
MIRROR=$REPO/../shared/data
if [ ! -d "$MIRROR" ]; then
  tar -xJf .gpu/data.tar.xz -C "$WORK" || { say "no data mirror"; exit 1; }
  MIRROR=$WORK/data
fi
for part in Snakefile config.yaml rules scripts schemas configs profiles envs paper report annotations constraints.txt; do
  [ -e "$part" ] && cp -r "$part" "$WORK/work/"
done
$PY -c 'import sys, yaml; cfg = yaml.safe_load(open("configs/smoke.yaml")); cfg["data"]["mirror"] = sys.argv[2]
open(sys.argv[1], "w").write(yaml.safe_dump(cfg, sort_keys=False))' "$WORK/work/run.yaml" "$MIRROR"
SMOKE_S=${GPU_CHECK_SMOKE_S:-240}
(cd "$WORK/work" && timeout "$SMOKE_S" $PY -m snakemake --cores "$(nproc)" --configfile run.yaml) >"$WORK/smoke.log" 2>&1 &
SMOKE_PID=$!
say "smoke run started (at most ${SMOKE_S}s)"

# 3. the CUDA tests, beside it (checks, not timings)
timeout 150 $PY -m pytest -p no:cacheprovider -rs -q --basetemp /tmp/gpu-check-pytest tests/backends/test_cuda.py \
  tests/training/test_finetune_target_logits.py >"$OUT/pytest-cuda.log" 2>&1
rc=$?
say "pytest tests/backends/test_cuda.py tests/training/test_finetune_target_logits.py: rc=$rc, $(tail -1 "$OUT/pytest-cuda.log")"
[ $rc -eq 0 ] || status=1

wait "$SMOKE_PID"
rc=$?
tail -c 60000 "$WORK/smoke.log" >"$OUT/smoke.log"
{
  echo "snakemake rc=$rc at ${SMOKE_S}s limit; check at $(( $(date +%s) - START ))s"
  grep -E "steps \([0-9]+%\) done" "$WORK/smoke.log" | tail -1
  for study in instructions first_token icl_bias followup; do
    echo "$study: $(ls "$WORK/work/results/$study/tables" 2>/dev/null | grep -c '\.md$') tables (.md)," \
         "$(ls "$WORK/work/results/$study/figures" 2>/dev/null | grep -c '\.png$') figures (.png)," \
         "findings.md $([ -s "$WORK/work/results/$study/findings.md" ] && echo present || echo MISSING)"
  done
  echo "results/findings.md $([ -s "$WORK/work/results/findings.md" ] && echo present || echo MISSING)"
  echo "model loads by device (job logs): $(grep -rhoE 'loaded .* on (cuda|cpu)[:0-9]*' "$WORK/work/logs" 2>/dev/null \
    | grep -oE 'on (cuda|cpu)[:0-9]*$' | sort | uniq -c | tr '\n' ' ')"
} >"$OUT/smoke-summary.txt"
tee -a "$OUT/check.log" <"$OUT/smoke-summary.txt"
[ $rc -eq 0 ] || status=1

# 3b. the in-process vLLM engine (engine: vllm) against the hf backend, where vllm is installed (exit 3: it is not)
timeout 300 $PY benchmarks/vllm_check.py --json "$OUT/vllm-check.json" >"$OUT/vllm-check.log" 2>&1
rc=$?
say "vllm engine check: rc=$rc ($([ $rc -eq 3 ] && echo "vllm not installed: engine vllm untested on hardware" || grep -hE "\"ok\"|Error" "$OUT/vllm-check.log" | tail -1))"
[ $rc -eq 0 ] || [ $rc -eq 3 ] || status=1

# 4. the engine's throughput on the four studies' workloads, alone on the machine
LEFT=$(( ${GPU_CHECK_BUDGET_S:-400} - ($(date +%s) - START) ))
[ $LEFT -gt 30 ] || LEFT=30
timeout $LEFT $PY benchmarks/gpu_throughput.py time --device "$DEVICE" --json "$OUT/gpu-throughput-$DEVICE.json" \
  "${QUICK[@]}" ${GPU_CHECK_ONLY:+--only $GPU_CHECK_ONLY} >"$OUT/throughput.log" 2>&1
rc=$?
say "throughput ($DEVICE, at most ${LEFT}s): rc=$rc"
[ $rc -eq 0 ] || { status=1; tail -5 "$OUT/throughput.log"; }
say "done: status=$status"
exit $status
