"""Generation and letter scoring on first_token's chat MCQ prompts: transformers one prompt at a time vs wobble's
batched hf backend vs llama.cpp (xllamacpp) on the model's own GGUF, in one run.

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
overlap, so the sums exceed the wall time).

llama.cpp scores letters the way ``LlamaCppBackend`` does (and a competent user of its server would): the top
``--top-k`` alternatives per prompt, the whole vocabulary only for a prompt where a letter is not among them
(the row counts those prompts and the prompt tokens the server ran); ``--full-vocab`` adds rows asking for the
whole vocabulary every time, with their largest difference from the top-k values. Each llama.cpp run gets a
fresh server, warmed up on a prompt outside the workload, so no run finds the workload's prompts cached by an
earlier one; each hf run starts with empty prefix caches.

Every timing is the median of ``--repeats`` runs (engines interleaved round by round) with its min and max;
speed-ups are ratios of medians with the range the runs allow; each row names the instruction set and
precision its engine computes with (torch's kernels and dtype; the llama.cpp wheel's build and the GGUF's
quantization), and a timing during which other processes used the CPUs is not reported (measure.py).
A script, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
import measure  # noqa: E402
from forward_phases import forward_phases, summary  # noqa: E402
from harness import ROOT  # noqa: E402
from rows import generations, score_agreement, text_agreement  # noqa: E402
from wobble.backends.llamacpp import DEFAULT_TOP_K, gguf_vocab_size  # noqa: E402

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


WARM_UP = [[{"role": "user", "content": "Hello"}]]  # not one of the prompts: no run starts with a cached prompt


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
    ap.add_argument("--top-k", type=int, default=DEFAULT_TOP_K,
                    help="llama.cpp letter scoring: alternatives asked for per prompt (LlamaCppBackend's "
                         "top_logprobs; the whole vocabulary only for a prompt where a letter is not among them)")
    ap.add_argument("--full-vocab", action="store_true",
                    help="also llama.cpp letter scoring that asks for the whole vocabulary on every prompt (the "
                         "engine's behaviour before top-k; slower for the same values)")
    ap.add_argument("--output-fp32", action="store_true",
                    help="also rows for the hf backend with its float32 output layer (output_fp32: true)")
    ap.add_argument("--quick", action="store_true", help="tiny random float32 GGUF model, 6 prompts")
    ap.add_argument("--prefix-reuse", action="store_true",
                    help="also the hf backend with shared-prefix generation (prefix_generation: true), with the "
                         "float32 output layer when --output-fp32: the chat models' settings in config.yaml")
    ap.add_argument("--phases", action="store_true", help="where generation's time goes, per engine")
    run = harness.start(ap, argv)
    args, repeats, max_load = run.args, run.repeats, run.max_load

    import torch

    from wobble.backends.base import GenParams
    from wobble.backends.llamacpp import LlamaCppBackend
    from wobble.models.load import load_model

    tmp = str(harness.scratch("bench-engines-"))
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
    ref = harness.hf(ref_model, tok, args.batch_size, "ref")
    letters = [lt for lt in LETTERS if any(f"\n{lt}." in m["content"] for p in prompts for m in p)] or ["A", "B"]
    ref_gen = ref.generate(prompts, params)
    ref_lp = ref.next_token_logprobs(prompts, letters)

    def new_tokens(gens):
        return sum(len(tok(g.text, add_special_tokens=False)["input_ids"]) for g in gens)

    def agreement(gens, lps):
        diff, argmax = score_agreement(ref_lp, lps, letters) if lps else (None, None)
        return {"texts_equal_fp32": None if gens is None else text_agreement(generations(ref_gen),
                                                                              generations(gens))[0],
                "max_abs_dlogprob_vs_fp32": diff,
                "argmax_agree_vs_fp32": None if argmax is None else f"{argmax}/{len(prompts)}"}

    # each engine: (name, workload, run(timing) -> (output, extra row fields), how it computes); run times its own
    # work with timing.measure, so that setting up (a server, a cache) stays outside the timer
    engines: list[tuple[str, str, Callable, dict]] = []

    # the anchor: plain transformers generate, one prompt at a time, in the study's dtype
    model, tok2, _ = load_model(model_dir, dtype=args.dtype)
    torch_engine = measure.torch_engine(model.dtype)
    single = harness.hf(model, tok2, 1, "single")
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

    anchor = "transformers generate, one prompt at a time"
    engines.append((anchor, "generation", lambda timing: (timing.measure(one_at_a_time), {}), torch_engine))

    variants = [(False, False)] + [(True, False)] * args.output_fp32 + [(args.output_fp32, True)] * args.prefix_reuse
    hf_fp32_model = None
    for fp32_head, prefix in variants:
        if fp32_head and hf_fp32_model is None:  # the float32 output layer changes the model in place: a second copy
            hf_fp32_model = load_model(model_dir, dtype=args.dtype)[0]
        m = hf_fp32_model if fp32_head else model
        hf = harness.hf(m, tok2, args.batch_size, "hf", output_fp32=fp32_head, reuse_prefix_generation=prefix)
        name = (f"wobble hf, batched ({args.batch_size}, {args.dtype})" + (", shared-prefix reuse" if prefix else "")
                + (", float32 output layer" if fp32_head else ""))
        how = measure.torch_engine(model.dtype, output_fp32=fp32_head)

        def hf_generation(timing, hf=hf, m=m, prefix=prefix):
            harness.fresh(hf)
            with (forward_phases(m) if args.phases else contextlib.nullcontext()) as phases:
                gens = timing.measure(lambda: hf.generate(prompts, params))
            extra = {"prefix_passes": hf.prefix_cache.misses} if prefix else {}
            return gens, {**extra, **(summary(phases) if args.phases else {})}

        def hf_scoring(timing, hf=hf):
            harness.fresh(hf)
            return timing.measure(lambda: hf.next_token_logprobs(prompts, letters)), {}

        engines.append((name, "generation", hf_generation, how))
        # letter scoring reuses shared prefixes in every variant; the reuse row would only repeat another's scoring
        if not prefix:
            engines.append((name, "letter scoring", hf_scoring, how))

    llama = measure.llamacpp_engine(gguf)

    def llamacpp(slots: int, workload: str, top_k: int | None):
        """One timed run on a fresh server (no prompt cached from an earlier run), warmed up on another prompt."""
        def timed(timing):
            lc = LlamaCppBackend(gguf, "lc", threads=args.threads, slots=slots, progress=False, top_logprobs=top_k)
            try:
                lc.generate(WARM_UP, GenParams(max_new_tokens=2))  # graph build
                seen = _trace_timings(lc)
                if workload == "generation":
                    out = timing.measure(lambda: lc.generate(prompts, params))
                    return out, (_timings_row(seen) if args.phases else {})
                out = timing.measure(lambda: lc.next_token_logprobs(prompts, letters))
                return out, {"top_logprobs": lc.top_logprobs, "prompts_asked_again_whole_vocabulary":
                             lc.full_vocab_prompts, **_timings_row(seen)}
            finally:
                lc.close()
        return timed

    for k in args.slots:
        name = f"llama.cpp (xllamacpp), {k} slot(s)"
        engines.append((name, "generation", llamacpp(k, "generation", args.top_k), llama))
        engines.append((name, "letter scoring", llamacpp(k, "letter scoring", args.top_k), llama))
        if args.full_vocab:
            engines.append((f"{name}, whole vocabulary on every prompt", "letter scoring",
                            llamacpp(k, "letter scoring", gguf_vocab_size(gguf)), llama))

    timings = {(name, workload): measure.Timing(max_load) for name, workload, _, _ in engines}
    outputs: dict = {}
    for _ in range(repeats):  # engines interleaved: a drift of the machine touches every engine alike
        for name, workload, timed, _ in engines:
            outputs[name, workload] = timed(timings[name, workload])

    rows = []
    bases = {"generation": timings[anchor, "generation"],
             "letter scoring": next(timings[n, w] for n, w, _, _ in engines if w == "letter scoring")}
    for name, workload, _, how in engines:
        (out, extra), t = outputs[name, workload], timings[name, workload]
        row = {"engine": name, "workload": workload, "isa_precision": measure.label(how), **t.row("s"),
               "prompts_per_s": t.rate(len(prompts)), **t.ratio(bases[workload], "speedup")}
        if workload == "generation":
            if name == anchor:
                n_new = sum(len(tok(o, add_special_tokens=False)["input_ids"]) for o in out)
                same = f"{sum(o == g.text for o, g in zip(out, ref_gen))}/{len(prompts)}"
            else:
                n_new, same = new_tokens(out), agreement(out, None)["texts_equal_fp32"]
            row.update(new_tokens_per_s=t.rate(n_new, 1), texts_equal_fp32=same)
        else:
            agree = agreement(None, out)
            row.update(max_abs_dlogprob_vs_fp32=agree["max_abs_dlogprob_vs_fp32"],
                       argmax_agree_vs_fp32=agree["argmax_agree_vs_fp32"])
            if name.endswith("whole vocabulary on every prompt"):
                top_k = outputs[name.rsplit(", whole", 1)[0], workload][0]
                row["max_abs_dlogprob_vs_top_k"] = score_agreement(top_k, out, letters)[0]
        rows.append({**row, **extra})
    meta = {"prompts": len(prompts), "max_new_tokens": args.max_new_tokens, "threads": args.threads,
            "dtype": args.dtype, "letters": letters, "quick": args.quick, "gguf": gguf.name,
            "speedup_base": {"generation": anchor, "letter scoring": "wobble hf, batched"}}
    return run.finish(meta, rows, timings.values(), {"torch": torch_engine, "llama.cpp": llama})


if __name__ == "__main__":
    sys.exit(main())
