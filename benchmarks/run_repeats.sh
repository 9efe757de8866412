#!/usr/bin/env bash
# Re-measures the speed ratios of benchmarks/README.md that are still one run, or were taken while something else
# ran on the machine (marked loaded): the lm-eval comparison, generation with a shared prompt block (Qwen,
# Para-Instructions W-EXAM), follow-up dialogues with the KV cache kept (SmolLM2 and Qwen), followup's run groups,
# the finetune's output layer at target positions, prefill against matmul throughput, the attention kernels (wobble
# and eager), and the neutral control's cost. Every timing is the median of 3 interleaved runs with its min and max,
# refused (written as "machine loaded: not reported") when other processes used the CPUs during a run; each row
# names the instruction set and precision of its engine, and says how many runs gave the first run's outputs again.
# The ICL and engines ratios are re-measured by run_fair_baselines.sh.
#
#     benchmarks/run_repeats.sh                                  # from the repository root, on a quiet machine
#     RUN=/path/to/a/finished/run benchmarks/run_repeats.sh
#     ONLY="dialogues groups" benchmarks/run_repeats.sh          # some parts only
#     ONLY=control benchmarks/run_repeats.sh                     # the neutral control's cost (~76 min)
#
# RUN is where the default run's results/ and resources/ are (default: this checkout). ONLY picks parts among
# lmeval, prefix, dialogues, groups, finetune, prefill, attention (default: all of these) and control. PREFIX_SPLIT
# is the instructions split of the shared-prompt-block row (default: the run's Para-Instructions W-EXAM split, 3
# instances per task; the English splits have 1 instance per task, so no prompt there shares its block); SPLIT is
# the attention rows' (default: the run's English W-EXAM split). The control part, run only when named, measures the
# neutral control's cost: all 8 group jobs of the default config with and without the control (about 76 min), into
# followup-control-cost.json. The lm-eval part needs the bench extra (.venv/bin/pip install -e ".[bench]"). Each
# part writes the JSON the README cites, replacing the earlier run's.
# Run nothing else on the machine meanwhile: the scripts refuse to report timings taken under load.
#
# Time on the 2-core AMD EPYC with 3 repeats, on a default run: lm-eval 25 min, shared prompt block 27 min (Qwen 21,
# gemma-270m-ni 6), dialogues 44 min (SmolLM2 21, Qwen 23), run groups 8 min, finetune 3 min, prefill 3 min,
# attention 55 min (gemma generation 2 and 1, SmolLM2 dialogues 34, Qwen dialogues 18): about 2 h 45 min; control 76
# min more.
set -euo pipefail
cd "$(dirname "$0")/.."
RUN="${RUN:-.}"
PY=.venv/bin/python
REPEATS="${REPEATS:-3}"
ONLY="${ONLY:-lmeval prefix dialogues groups finetune prefill attention}"
SPLIT="$(realpath "${SPLIT:-$RUN/results/instructions/splits/english/original/w_exam/seed1.jsonl}")"
PREFIX_SPLIT="${PREFIX_SPLIT:-$RUN/results/instructions/splits/para/original/w_exam/seed1.jsonl}"
want() { [[ " $ONLY " == *" $1 "* ]]; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

if want lmeval && ! $PY -c "import lm_eval" 2>/dev/null; then
    echo 'run_repeats.sh: lm-eval is not installed; .venv/bin/pip install -e ".[bench]" first, or leave lmeval out of ONLY' >&2
    exit 2
fi

# ICL label log-likelihoods vs lm-evaluation-harness (target >= 3x, 1e-3): 24 BoolQ items x 2 label words,
# gemma-3-270m in float32 for both engines, lm-eval at batch 1 with and without its logits cache
if want lmeval; then
    $PY benchmarks/bench_lmeval.py --requests "$RUN/results/icl_bias/requests/boolq_answer_qword.json" \
        --model-dir "$RUN/resources/models/gemma-270m" --items 24 --repeats "$REPEATS" \
        --json benchmarks/lmeval-gemma-n24.json
fi

# generation with a shared prompt block: Qwen2.5-Coder-0.5B chat on the para W-EXAM split, 1 thread as an
# instructions_infer job, batches of 32, groups mixed in one batch (and one batch per group, and the phases)
if want prefix; then
    $PY benchmarks/bench_generation_prefix.py --split "$PREFIX_SPLIT" \
        --model-dir "$RUN/resources/models/qwen2.5-coder-0.5b-instruct" --chat --max-new-tokens 32 --threads 1 \
        --batch-size 32 --per-group --phases --repeats "$REPEATS" \
        --json benchmarks/generation-prefix-qwen-w-exam-mixed.json
    # gemma-270m-ni, plain prompts in batches of 8 (why prefix_generation is off for gemma)
    $PY benchmarks/bench_generation_prefix.py --split "$PREFIX_SPLIT" \
        --model-dir "$RUN/resources/models/finetuned/gemma-270m-ni" --max-new-tokens 32 --threads 1 --batch-size 8 \
        --repeats "$REPEATS" --json benchmarks/generation-prefix-gemma-ni-w-exam-mixed.json
fi

# follow-up dialogues, the KV cache kept across turns (target >= 3x): 100 Coin Flip items, 32 per model call,
# 1 thread as a followup_infer job
if want dialogues; then
    for pair in smollm2:smollm2-135m-instruct qwen:qwen2.5-coder-0.5b-instruct; do
        name="${pair%%:*}" key="${pair#*:}"
        $PY benchmarks/bench_dialogue_reuse.py --run "$RUN" --dataset coin_flip --n 100 --chunk-size 32 \
            --model-dir "$RUN/resources/models/$key" --threads 1 --repeats "$REPEATS" \
            --json "benchmarks/dialogue-reuse-$name-n100.json"
    done
fi

# followup's run groups: SmolLM2's StrategyQA group asked run by run vs as one set, 1 thread
if want groups; then
    $PY benchmarks/bench_followup_groups.py --run "$RUN" --model smollm2-135m-instruct --dataset strategyqa \
        --threads 1 --repeats "$REPEATS" --json benchmarks/followup-groups-smollm2-strategyqa.json
fi

# the neutral control's cost: every group job of the default config without and with the control
if want control; then
    for model in qwen2.5-coder-0.5b-instruct smollm2-135m-instruct; do
        for dataset in coin_flip mmlu multiarith strategyqa; do
            $PY benchmarks/bench_followup_groups.py --run "$RUN" --model "$model" --dataset "$dataset" --threads 1 \
                --engines set_without_control set --alternate --repeats "$REPEATS" --json "$TMP/control-$model-$dataset.json"
        done
    done
    $PY - "$TMP" <<'EOF'
import json, sys
from pathlib import Path

groups = []
for path in sorted(Path(sys.argv[1]).glob("control-*.json")):
    res = json.loads(path.read_text())
    groups.append({"model": res["meta"]["runs_of"], "dataset": res["meta"]["dataset"], **res})
what = ("bench_followup_groups.py --run <the default run> --threads 1 --engines set_without_control set --alternate "
        "--repeats N, per model and dataset of the default config, one group at a time (benchmarks/run_repeats.sh); "
        "s = wall time, cpu_s = process CPU time, medians of the rounds")
Path("benchmarks/followup-control-cost.json").write_text(json.dumps({"what": what, "groups": groups}, indent=2) + "\n")
EOF
fi

# the finetune's output layer only at target positions: gemma-3-270m LoRA step, 4 batches of 4, 1 thread
if want finetune; then
    $PY benchmarks/bench_finetune_head.py --pairs "$RUN/results/instructions/splits/train_pairs.jsonl" \
        --model-dir "$RUN/resources/models/gemma-270m" --batches 4 --repeats "$REPEATS" \
        --json benchmarks/finetune-head-gemma-n4.json
fi

# prefill throughput as a share of matmul throughput (target >= 70 %), with the default attention and wobble's:
# gemma-3-270m, 4 x 512 tokens, 2 threads; 3 alternating pairs of processes, each the median of 5 rounds
if want prefill; then
    for pair in 1 2 3; do
        for attn in sdpa wobble; do
            $PY benchmarks/bench_prefill.py --model-dir "$RUN/resources/models/gemma-270m" --tokens 512 --batch 4 \
                --reps 5 --attn "$attn" --json "$TMP/prefill-$pair-$attn.json"
        done
    done
    $PY - "$TMP" <<'EOF'
import json, sys
from pathlib import Path

runs = [{**json.loads(p.read_text()), "pair": int(p.name.split("-")[1])}
        for p in sorted(Path(sys.argv[1]).glob("prefill-*.json"))]
command = (".venv/bin/python benchmarks/bench_prefill.py --model-dir resources/models/gemma-270m --tokens 512 "
           "--batch 4 --reps 5 --attn {sdpa|wobble}")
Path("benchmarks/prefill-gemma-attention.json").write_text(json.dumps(
    {"command": command, "what": "alternating sdpa/wobble, 3 pairs (benchmarks/run_repeats.sh)", "runs": runs},
    indent=2) + "\n")
EOF
fi

# attention kernels on generation: gemma-3-270m with wobble's kernel, the finetuned gemma-270m-ni with eager, on
# the English W-EXAM split (2 threads); wobble's kernel on the dialogues (1 thread; Qwen on 32 items)
if want attention; then
    $PY benchmarks/bench_attention.py --split "$SPLIT" --model-dir "$RUN/resources/models/gemma-270m" \
        --max-new-tokens 32 --threads 2 --rounds "$REPEATS" --kernels sdpa wobble \
        --json benchmarks/attention-gemma-w-exam-wobble.json
    $PY benchmarks/bench_attention.py --split "$SPLIT" \
        --model-dir "$RUN/resources/models/finetuned/gemma-270m-ni" --max-new-tokens 32 --threads 2 --rounds "$REPEATS" \
        --json benchmarks/attention-gemma-ni-english-w-exam.json
    $PY benchmarks/bench_dialogue_reuse.py --run "$RUN" --dataset coin_flip --n 100 --chunk-size 32 \
        --model-dir "$RUN/resources/models/smollm2-135m-instruct" --threads 1 --phases --attention sdpa wobble \
        --repeats "$REPEATS" --json benchmarks/dialogue-attention-smollm2-n100.json
    $PY benchmarks/bench_dialogue_reuse.py --run "$RUN" --dataset coin_flip --n 32 --chunk-size 32 \
        --model-dir "$RUN/resources/models/qwen2.5-coder-0.5b-instruct" --threads 1 --phases --attention sdpa wobble \
        --repeats "$REPEATS" --json benchmarks/dialogue-attention-qwen-n32.json
fi
