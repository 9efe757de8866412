"""ICL label-word log-likelihoods through lm-evaluation-harness's HF backend vs wobble's hf backend, on the same
requests, model object and machine, in one run (target: wobble >= 3x faster, the same log-likelihoods to
1e-3).

    .venv/bin/pip install -e ".[bench]"          # lm-eval 0.4.13: not a wobble dependency; only this script needs it
    .venv/bin/python benchmarks/bench_lmeval.py --requests results/icl_bias/requests/boolq_answer_qword.json \\
        --model-dir resources/models/gemma-270m --items 100
    .venv/bin/python benchmarks/bench_lmeval.py --quick --json out.json        # tiny random model, seconds

The workload: every (prompt, label word) pair of the first ``--items`` label-scoring requests of an icl_bias
bundle (16 demonstrations + the test item; the candidates of the bundle). lm-eval gets them as
``loglikelihood`` instances (context = prompt, continuation = label word) through ``HFLM`` wrapping the same
model object; wobble as ``continuation_logprobs`` (its exact prefix reuse runs the demonstrations once per
prompt set). Both in ``--dtype`` (float32 by default, so the agreement column measures the engines, not
bf16 noise). lm-eval runs twice: with its logits cache (default) and without. Reported: seconds,
requests/s, the speed-up of wobble, the largest |Δ log-likelihood| on the requests both tokenized
identically (and how many those are), and the argmax agreement over each item's candidates. (``--quick``'s
byte-level tokenizer appends an end-of-sequence id to every encoding, which lm-eval keeps inside its context:
no request is tokenized alike there, so only the timing columns mean something.)

Every timing is the median of ``--repeats`` runs (the three engines interleaved round by round; each lm-eval run
a fresh ``HFLM``, each wobble run fresh prefix caches) with its min and max; speed-ups are ratios of medians with
the range the runs allow; agreement is computed from each engine's first run, and ``repeats_identical`` counts
the runs that gave its log-likelihoods again. Each row names the instruction set and precision torch computes
with, and a timing during which other processes used the CPUs is not reported (measure.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
import measure  # noqa: E402
from bench_icl_scoring import add_workload_arguments, workload  # noqa: E402

CACHE_ON, CACHE_OFF = "lm-eval 0.4 HFLM, logits cache on", "lm-eval 0.4 HFLM, logits cache off"
WOBBLE = "wobble hf (exact prefix reuse)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_workload_arguments(ap, 100, "float32")
    ap.add_argument("--batch-size", type=int, default=8, help="wobble's batch size")
    ap.add_argument("--lmeval-batch-size", type=int, default=1,
                    help="lm-eval's: it keeps the logits of every position (gemma-3: 262k x 4 bytes per token), so "
                         "8 prompts of 1,300 tokens need ~22 GB; 1 fits")
    ap.add_argument("--quick", action="store_true", help="tiny random model, made-up prompts (seconds)")
    run = harness.start(ap, argv)
    args = run.args

    from importlib.metadata import version

    import torch
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    prompts, candidates, model, tok = workload(args, args.dtype)
    pairs = [(p, c) for p in prompts for c in candidates]
    wobble = harness.hf(model, tok, args.batch_size)
    encodings: list = []

    def lmeval(cache: bool):
        def timed(timing):  # a fresh HFLM per run: no run finds an earlier run's state
            lm = HFLM(pretrained=model, tokenizer=tok, batch_size=args.lmeval_batch_size, logits_cache=cache,
                      device="cpu")
            instances = [Instance("loglikelihood", doc={}, arguments=(p, c), idx=i) for i, (p, c) in enumerate(pairs)]
            got = timing.measure(lambda: lm.loglikelihood(instances, disable_tqdm=True))
            if not encodings:  # how lm-eval tokenized each request (the same every run)
                encodings.extend(lm._encode_pair(p, c) for p, c in pairs)
            return [ll for ll, _ in got]
        return timed

    def ours(timing):
        harness.fresh(wobble)
        lps = timing.measure(lambda: wobble.continuation_logprobs([p for p, _ in pairs], [c for _, c in pairs]))
        return [sum(x) for x in lps]

    timings, results, identical = measure.interleave(
        [(CACHE_ON, lmeval(True)), (CACHE_OFF, lmeval(False)), (WOBBLE, ours)], run.repeats, run.max_load)

    same_ids = [i for i, (p, c) in enumerate(pairs)
                if encodings[i] == (wobble.encode_prompt(p), wobble.encode_continuation(c))]
    k = len(candidates)

    def argmax_agree(a, b):
        return sum(max(range(k), key=lambda j: a[i * k + j]) == max(range(k), key=lambda j: b[i * k + j])
                   for i in range(len(prompts)))

    ref = results[CACHE_ON]
    how = measure.torch_engine(model.dtype)
    rows = []
    for name, t in timings.items():
        vals = results[name]
        rows.append({"engine": name, "isa_precision": measure.label(how), **t.row("seconds"),
                     "repeats_identical": identical[name], "requests_per_s": t.rate(len(pairs)),
                     **t.ratio(timings[CACHE_ON], "speedup_vs_lmeval_cache_on"),
                     **t.ratio(timings[CACHE_OFF], "speedup_vs_lmeval_cache_off"),
                     "max_abs_dll_vs_lmeval": max((abs(vals[i] - ref[i]) for i in same_ids), default=None),
                     "argmax_agree_vs_lmeval": f"{argmax_agree(vals, ref)}/{len(prompts)}"})
    lm_eval_t = [timings[CACHE_ON], timings[CACHE_OFF]]
    slowest = measure.LOADED if any(t.loaded for t in lm_eval_t) else round(max(t.median for t in lm_eval_t), 3)
    meta = {"items": len(prompts), "requests": len(pairs), "candidates": candidates, "dtype": str(model.dtype),
            "threads": torch.get_num_threads(), "quick": args.quick, "batch_size": args.batch_size,
            "lmeval_batch_size": args.lmeval_batch_size,
            "same_token_ids": f"{len(same_ids)}/{len(pairs)}", "slowest_lmeval_s": slowest}
    return run.finish(meta, rows, timings.values(), {"torch": how, "lm-eval": version("lm-eval")})


if __name__ == "__main__":
    sys.exit(main())
