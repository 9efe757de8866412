#!/usr/bin/env bash
# Re-measures the speed ratios of benchmarks/README.md whose baselines are the strongest a competent user of the
# other tool would write: the per-item transformers forward keeps only the position it reads (logits_to_keep=1),
# llama.cpp scores letters from the top 20 alternatives (the whole vocabulary only where a letter is missing),
# and every timing is the median of 3 interleaved runs with its min and max, refused (written as "machine loaded:
# not reported") when other processes used the CPUs during a run. Each row names the instruction set and
# precision of its engine.
#
#     benchmarks/run_fair_baselines.sh                 # from the repository root, on a quiet machine
#     RUN=/path/to/a/finished/run benchmarks/run_fair_baselines.sh
#     WITH_OLD_BASELINES=1 benchmarks/run_fair_baselines.sh
#
# RUN is where the workflow's results/ and resources/models/ are (default: this checkout). WITH_OLD_BASELINES=1
# adds, beside the fair baselines, the ones measured before (the per-item forward with the output layer at every
# position; llama.cpp asked for the whole vocabulary on every prompt), to show what changed; it roughly doubles
# the time. Run nothing else on the machine meanwhile: the scripts refuse to report timings taken under load.
#
# Expected time on the 2-core AMD EPYC of the earlier measurements (from their JSONs, x 3 repeats): ICL scoring
# ~13 min (~20 with the old baseline), SmolLM2 engines ~6 min (~10), Qwen2.5-Coder-0.5B engines ~10 min (~24).
set -euo pipefail
cd "$(dirname "$0")/.."
RUN="${RUN:-.}"
PY=.venv/bin/python
REPEATS="${REPEATS:-3}"
OLD_ICL=()
OLD_LLAMA=()
if [[ "${WITH_OLD_BASELINES:-0}" == 1 ]]; then
    OLD_ICL=(--all-positions-baseline)
    OLD_LLAMA=(--full-vocab)
fi

# ICL label scoring (target >= 10x over the per-item forward): gemma-3-270m, the first 48 label-word requests of
# boolq_answer_qword (16 demonstrations, ~1,300 tokens per prompt), torch's threads (2 here); with the float32
# output layer every model uses and the opt-in wobble attention kernel as further rows
$PY benchmarks/bench_icl_scoring.py --requests "$RUN/results/icl_bias/requests/boolq_answer_qword.json" \
    --model-dir "$RUN/resources/models/gemma-270m" --items 48 --attention wobble --repeats "$REPEATS" \
    ${OLD_ICL[@]+"${OLD_ICL[@]}"} --json benchmarks/icl-scoring-gemma-n48-fair.json

# Generation and letter scoring vs llama.cpp and one-prompt-at-a-time transformers (targets: >= 5x over one prompt
# at a time, >= 2x over llama.cpp): first_token's 64 Medium prompts, 64 new tokens, the study's engine settings
for pair in smollm2:smollm2-135m-instruct qwen:qwen2.5-coder-0.5b-instruct; do
    name="${pair%%:*}" key="${pair#*:}"
    $PY benchmarks/bench_engines.py --prompts "$RUN/results/first_token/splits/prompts.jsonl" \
        --model-dir "$RUN/resources/models/$key" --key "$key" --n 64 --max-new-tokens 64 --batch-size 32 \
        --slots 1 4 --threads 2 --phases --output-fp32 --prefix-reuse --top-k 20 --repeats "$REPEATS" \
        ${OLD_LLAMA[@]+"${OLD_LLAMA[@]}"} --json "benchmarks/engines-$name-n64-fair.json"
done
