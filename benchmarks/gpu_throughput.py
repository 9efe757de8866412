"""The engine's throughput on the four studies' workloads, on a CUDA GPU and on the CPU, with random weights of
the default models' shapes (their ``config.json``) and the token ids of the studies' real prompts.

    .venv/bin/python benchmarks/gpu_throughput.py prepare --run RUN_DIR --out .gpu/workloads.json.gz
    python3 benchmarks/gpu_throughput.py time --workloads .gpu/workloads.json.gz --device cuda --json gpu.json
    .venv/bin/python benchmarks/gpu_throughput.py time --workloads .gpu/workloads.json.gz --device cpu --json cpu.json

``prepare`` (on a machine with a finished default run, ``RUN_DIR``, and its materialized models) reads each
workload's real prompts as its study builds them, renders and tokenizes them with the real model's tokenizer and
chat template as the hf backend does, and writes the token ids with the models' configs into one small file:
the models' weights (0.3-2.5 GB) need not travel, the ids and shapes do. ``time`` builds each model from its
config with seeded random weights (made on the CPU, so every device computes with the same numbers), in
bfloat16 with the study's model spec (batch size, shared-prefix reuse, float32 output layer, cross-turn KV
reuse), and times wobble's hf backend on each workload through the call the study makes:

* ``icl_bias``: gemma-3-270m, label-word scoring (``next_token_logprobs``) of BoolQ 16-shot prompts, chunks of 64;
* ``first_token``: SmolLM2-135M and Qwen2.5-Coder-0.5B, greedy generation of 64 tokens with the first token's
  letter log-probs (``generate`` with ``first_token_candidates``) on the chat prompts, chunks of 32;
* ``instructions``: gemma-3-270m (the finetune's shapes), greedy generation of 32 tokens on the English W-EXAM
  prompts, chunks of 32;
* ``followup``: SmolLM2-135M, Coin Flip dialogues with 3 follow-ups at T = 0.5, 96 tokens a reply
  (``infer_runs``, the study's dialogue runner).

Random weights give the throughput of real ones: the work of a forward pass depends on the shapes (layers,
widths, vocabulary, sequence lengths, batch), not on the values. What values do change is where generation
ends: a random model meets an end token at random, so end tokens are switched off and every reply runs to
``max_new_tokens`` on both devices (the real models stop earlier on many prompts: items/s here are for full-length
replies). A token is a word ``t<id>`` of a synthetic word-level tokenizer over the model's vocabulary, so a
prompt's ids are exactly the real tokenizer's and generated replies go back into dialogues losslessly.

Reported per workload and device: median seconds of ``--repeats`` runs (after an untimed warm-up run,
``--warmup``) with min and max, items/s, new tokens/s, the card or CPU, torch's version and the precision. ``--quick``
(for a check that the script works) takes the first 4 items of each workload with 4 new tokens.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from rows import emit  # noqa: E402

# model key (config.yaml) -> the default run's materialized directory name and its spec's engine options
MODELS = {"gemma-3-270m": "gemma-270m", "smollm2-135m": "smollm2-135m-instruct",
          "qwen2.5-coder-0.5b": "qwen2.5-coder-0.5b-instruct"}
SPEC_OF = {"gemma-3-270m": "gemma-270m", "smollm2-135m": "smollm2-135m-instruct",
           "qwen2.5-coder-0.5b": "qwen2.5-coder-0.5b-instruct"}


def ids_text(ids) -> str:
    """Token ids as the synthetic tokenizer's text: one word ``t<id>`` per id."""
    return " ".join(f"t{i}" for i in ids)


def synthetic_tokenizer(vocab_size: int, pad_id: int, chat_template: str | None = None):
    """A word-level tokenizer whose word ``t<i>`` is id ``i`` for every id of the model's vocabulary: text made
    by :func:`ids_text` encodes to exactly those ids, and decoding gives the words back."""
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.WordLevel({f"t{i}": i for i in range(vocab_size)}, unk_token=f"t{pad_id}"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    # single_word: the pad word "t2" must not match inside "t2683"
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token=AddedToken(f"t{pad_id}", single_word=True,
                                                                             special=True))
    tok.chat_template = chat_template
    return tok


# ------------------------------------------------------------------------------------------ prepare (local)

def _real_ids(tok, text: str) -> list[int]:
    """The hf backend's prompt ids (``HFBackend.encode_prompt``): no special tokens, then the tokenizer's BOS
    when it normally adds one and the text does not start with it."""
    ids = list(tok(text, add_special_tokens=False)["input_ids"])
    probe = tok("x", add_special_tokens=True)["input_ids"]
    bos = tok.bos_token_id
    if bos is not None and probe and probe[0] == bos and (not ids or ids[0] != bos):
        ids = [bos] + ids
    return ids


def _chatml_template(tok) -> tuple[str, str]:
    """The synthetic tokenizer's chat template for a ChatML model: the real headers' ids around each message's
    ids, and the model's default system message when the real template adds one. Also its name."""
    enc = lambda s: ids_text(tok(s, add_special_tokens=False)["input_ids"])  # noqa: E731
    head = {r: enc(f"<|im_start|>{r}\n") for r in ("system", "user", "assistant")}
    end = enc("<|im_end|>\n")
    probe = tok.apply_chat_template([{"role": "user", "content": "MARK"}], add_generation_prompt=True, tokenize=False)
    default = ""
    if probe.startswith("<|im_start|>system\n"):
        system = probe[len("<|im_start|>system\n"):probe.index("<|im_end|>")]
        default = (f"{{% if messages[0]['role'] != 'system' %}}{head['system']} {enc(system)} {end} "
                   "{% endif %}")
    template = (default + "{% for m in messages %}{% if m['role'] == 'system' %}" + head["system"]
                + " {% elif m['role'] == 'user' %}" + head["user"] + " {% else %}" + head["assistant"]
                + " {% endif %}{{ m['content'] }} " + end + " {% endfor %}{% if add_generation_prompt %}"
                + head["assistant"] + "{% endif %}")
    return template, "ChatML"


def prepare(args) -> int:
    import yaml
    from transformers import AutoTokenizer

    from wobble.config import validate_config
    from wobble.io import read_jsonl
    from wobble.studies.first_token.answers import letter_variants
    from wobble.studies.followup.pipeline import run_dialogues, select_items
    from wobble.studies.followup.prompts import load_paper_prompts

    run = Path(args.run)
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    validate_config(cfg, ROOT / "schemas" / "config.schema.yaml")  # fills the schema's defaults
    models, toks = {}, {}
    for key, dirname in MODELS.items():
        d = run / "resources" / "models" / dirname
        toks[key] = AutoTokenizer.from_pretrained(d)
        spec = cfg["models"][SPEC_OF[key]]
        models[key] = {"config": json.loads((d / "config.json").read_text()), "pad_id": toks[key].pad_token_id
                       if toks[key].pad_token_id is not None else toks[key].eos_token_id,
                       "spec": {k: spec.get(k) for k in ("batch_size", "prefix_generation", "output_fp32",
                                                         "turn_reuse")}}
    work = []

    # icl_bias: label-word requests of one pair, prompt = prefix + query, the union of their candidates
    bundle = json.loads((run / "results" / "icl_bias" / "requests" / f"{args.icl_pair}.json").read_text())
    reqs = [r for r in bundle["requests"] if not r["generate"]][:args.icl_items]
    tok = toks["gemma-3-270m"]
    cands = sorted({c for r in reqs for c in r["candidates"]})
    work.append({"study": "icl_bias", "model": "gemma-3-270m", "call": "score", "chunk": 64,
                 "what": f"label-word scoring, {args.icl_pair}, 16-shot prompts",
                 "prompts": [_real_ids(tok, bundle["prefixes"][r["prefix_id"]] + r["query"]) for r in reqs],
                 "candidates": [tok(c, add_special_tokens=False)["input_ids"] for c in cands]})

    # first_token: the chat prompts (the constraint bench_engines.py takes), greedy, first-token letters
    rows = [r for r in read_jsonl(run / "results" / "first_token" / "splits" / "prompts.jsonl")
            if r.get("constraint") == "medium"][:args.first_token_items]
    letters = sorted({lt for r in rows for lt in r["letters"]})
    ft = cfg["first_token"]
    for key in ("smollm2-135m", "qwen2.5-coder-0.5b"):
        tok = toks[key]
        shim = type("Enc", (), {"encode_continuation": staticmethod(
            lambda s, t=tok: list(t(s, add_special_tokens=False)["input_ids"]))})()
        variants = sorted({v for vs in letter_variants(shim, letters).values() for v in vs})
        prompts = [_real_ids(tok, tok.apply_chat_template(r["messages"], add_generation_prompt=True, tokenize=False))
                   for r in rows]
        work.append({"study": "first_token", "model": key, "call": "generate", "chunk": 32,
                     "what": "chat MCQ prompts, greedy, first-token letter log-probs",
                     "max_new_tokens": ft["max_new_tokens"], "temperature": 0.0, "prompts": prompts,
                     "candidates": [tok(v, add_special_tokens=False)["input_ids"] for v in variants]})

    # instructions: the English W-EXAM split's Tk-Instruct prompts, the main model (gemma-270m-ni's shapes)
    split = read_jsonl(run / "results" / "instructions" / "splits" / "english" / "original" / "w_exam" / "seed1.jsonl")
    tok = toks["gemma-3-270m"]
    work.append({"study": "instructions", "model": "gemma-3-270m", "call": "generate", "chunk": 32,
                 "what": "English W-EXAM prompts (definition + 2 examples), greedy",
                 "max_new_tokens": cfg["instructions"]["max_new_tokens"], "temperature": 0.0,
                 "prompts": [_real_ids(tok, r["prompt"]) for r in split[:args.instructions_items]]})

    # followup: Progressive Form dialogues on Coin Flip, as bench_dialogue_reuse.py builds them
    fu = cfg["followup"]
    records = read_jsonl(run / "resources" / "prepared" / "coin_flip.jsonl")
    chosen = select_items("coin_flip", records, n_items=args.followup_items, n_heldout=fu["n_heldout"], seed=fu["seed"])
    by_id = {r["id"]: r for r in records}
    dialogues = run_dialogues(load_paper_prompts(ROOT / "paper" / "followup"), "coin_flip", "progressive_A_none",
                              [by_id[i] for i in chosen["eval"]], [by_id[i] for i in chosen["heldout"]],
                              seed=fu["seed"], gate=fu["gate"], shots=fu["shots"])
    tok = toks["smollm2-135m"]
    template, _ = _chatml_template(tok)
    enc = lambda s: ids_text(tok(s, add_special_tokens=False)["input_ids"])  # noqa: E731
    real_first = [len(_real_ids(tok, tok.apply_chat_template(d["messages"], add_generation_prompt=True,
                                                             tokenize=False))) for d in dialogues]
    for d in dialogues:
        d["messages"] = [{**m, "content": enc(m["content"])} for m in d["messages"]]
        d["followups"] = [enc(f) for f in d["followups"]]
    synth = synthetic_tokenizer(len(tok), models["smollm2-135m"]["pad_id"], template)
    mine = [len(synth(synth.apply_chat_template(d["messages"], add_generation_prompt=True, tokenize=False))["input_ids"])
            for d in dialogues]
    work.append({"study": "followup", "model": "smollm2-135m", "call": "dialogue", "chunk": fu["chunk_size"],
                 "what": "Coin Flip, Progressive Form A (3 follow-ups), sampled", "max_new_tokens": fu["max_new_tokens"],
                 "temperature": fu["temperature"], "seed": fu["sample_seed"], "chat_template": template,
                 "dialogues": dialogues, "first_turn_tokens_real_vs_synthetic": [sum(real_first), sum(mine)]})
    for m, t in toks.items():
        models[m]["vocab_size"] = max(len(t), models[m]["config"].get("vocab_size", 0))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8") as f:
        json.dump({"models": models, "workloads": work, "run": str(run)}, f)
    print(f"{out}: {len(work)} workloads, {out.stat().st_size} bytes")
    return 0


# ----------------------------------------------------------------------------------------------- time

def build_model(entry: dict, device: str, quick: bool):
    """The model from its config with seeded random weights (made on the CPU: the same on every device), in
    bfloat16 on ``device``; ``quick`` keeps 2 layers."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    raw = copy.deepcopy(entry["config"])
    for k in ("torch_dtype", "dtype"):
        raw.pop(k, None)
    cfg = AutoConfig.for_model(raw.pop("model_type"), **raw)
    if quick:
        cfg.num_hidden_layers = 2
        if getattr(cfg, "layer_types", None):
            cfg.layer_types = cfg.layer_types[:2]
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32, attn_implementation="sdpa")
    return model.to(device=device, dtype=torch.bfloat16).eval()


def _chunks(items, n):
    return [items[i:i + n] for i in range(0, len(items), n)]


def runner(w: dict, backend, new: int):
    """``(run(items), items, new tokens per item)``: the study's call on a list of its items, chunk by chunk,
    ``new`` tokens a reply."""
    from wobble.backends.base import GenParams
    from wobble.studies.followup.pipeline import infer_runs

    if w["call"] == "score":
        cands = [ids_text(c) for c in w["candidates"]]
        return ((lambda xs: [backend.next_token_logprobs(c, cands) for c in _chunks(xs, w["chunk"])]),
                [ids_text(p) for p in w["prompts"]], 0)
    if w["call"] == "generate":
        params = GenParams(max_new_tokens=new, temperature=w["temperature"],
                           first_token_candidates=tuple(ids_text(c) for c in w.get("candidates", [])))
        return ((lambda xs: [backend.generate(c, params) for c in _chunks(xs, w["chunk"])]),
                [ids_text(p) for p in w["prompts"]], new)

    def dialogues(ds):
        with tempfile.TemporaryDirectory(prefix="gpu-throughput-") as tmp:
            infer_runs(backend, {Path(tmp) / "d.jsonl": ds}, temperature=w["temperature"], sample_seed=w["seed"],
                       max_new_tokens=new, chunk_size=w["chunk"], desc="followup")
    return dialogues, w["dialogues"], new * (1 + len(w["dialogues"][0]["followups"]))


def time_workload(w: dict, entry: dict, device: str, repeats: int, quick: bool, warmup: str) -> dict:
    """One workload on one device: a fresh model (the float32 output layer changes it), a warm-up run (``full``:
    the whole workload; ``chunk``: its first chunk, at most 8 items), then ``repeats`` timed runs, each with empty
    prefix caches."""
    import torch

    from wobble.backends.hf import HFBackend
    from wobble.backends.hf_prefix import PrefixCache

    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    t0 = time.perf_counter()
    model = build_model(entry, device, quick)
    built = time.perf_counter() - t0
    spec = entry["spec"]
    tok = synthetic_tokenizer(entry["vocab_size"], entry["pad_id"], w.get("chat_template"))
    backend = HFBackend(model, tok, "causal", w["model"], batch_size=spec["batch_size"] or 8, progress=False,
                        reuse_prefix_generation=bool(spec["prefix_generation"]),
                        output_fp32=bool(spec["output_fp32"]), reuse_turns=bool(spec["turn_reuse"]))
    backend.end_ids = set()  # random weights end at random: every reply runs to max_new_tokens
    run, items, new_per_item = runner(w, backend, 4 if quick else w.get("max_new_tokens", 0))
    items = items[:4] if quick else items
    run(items if warmup == "full" else items[:min(8, w["chunk"])])  # kernels, library handles, the allocator
    sync()
    timing = measure.Timing(float("inf"))
    for _ in range(repeats):
        backend.prefix_cache = PrefixCache()

        def once():
            run(items)
            sync()
        timing.measure(once)
    new_tokens = new_per_item * len(items)
    row = {"study": w["study"], "model": w["model"], "workload": w["what"], "device": device,
           "precision": "bf16" + (" body, float32 output layer at scored positions" if backend.output_fp32 else ""),
           "items": len(items), "item": "dialogue" if w["call"] == "dialogue" else "prompt",
           "prompt_tokens": sum(len(p) for p in w["prompts"][:len(items)]) if "prompts" in w else None,
           "new_tokens": new_tokens, "batch_size": backend.batch_size, "chunk": w["chunk"],
           **timing.row("s"), "items_per_s": timing.rate(len(items), 3),
           "new_tokens_per_s": timing.rate(new_tokens, 1) if new_tokens else None, "warmup": warmup,
           "model_build_s": round(built, 2)}
    del backend, model
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return row


def time_all(args) -> int:
    import torch

    with gzip.open(args.workloads, "rt", encoding="utf-8") as f:
        data = json.load(f)
    repeats, _ = measure.settings(args)
    facts = {"machine": measure.machine(), "torch": torch.__version__, "device": args.device,
             "threads": torch.get_num_threads()}
    if args.device.startswith("cuda"):
        facts["gpu"] = torch.cuda.get_device_name(0)
        facts["cuda"] = torch.version.cuda
    else:
        facts["cpu_engine"] = measure.torch_engine(torch.bfloat16)
    warmup = args.warmup or ("full" if args.device.startswith("cuda") else "chunk")
    rows = []
    for w in data["workloads"]:
        if not args.only or w["study"] in args.only:
            rows.append(time_workload(w, data["models"][w["model"]], args.device, repeats, args.quick, warmup))
            print(json.dumps(rows[-1]), flush=True)
    meta = {**facts, "repeats": repeats, "quick": args.quick, "workloads_from": data.get("run"),
            "weights": "random (seeded, made on the CPU), shapes of the models' config.json",
            "end_tokens": "off: every reply runs to max_new_tokens", "loadavg_at_end": measure._loadavg()}
    emit(meta, rows, args.json)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="write the workloads file from a finished default run")
    p.add_argument("--run", required=True, help="a checkout where the default run has finished")
    p.add_argument("--out", default=str(ROOT / ".gpu" / "workloads.json.gz"))
    p.add_argument("--icl-pair", default="boolq_answer_qword")
    p.add_argument("--icl-items", type=int, default=48)
    p.add_argument("--first-token-items", type=int, default=32)
    p.add_argument("--instructions-items", type=int, default=64)
    p.add_argument("--followup-items", type=int, default=32)
    t = sub.add_parser("time", help="time every workload on one device")
    t.add_argument("--workloads", default=str(ROOT / ".gpu" / "workloads.json.gz"))
    t.add_argument("--device", default="cuda")
    t.add_argument("--only", nargs="*", help="only these studies")
    t.add_argument("--quick", action="store_true", help="4 items a workload, 4 new tokens, 2 layers")
    t.add_argument("--warmup", choices=("full", "chunk"),
                   help="untimed run before the timed ones: the whole workload (default on a GPU, where the first run "
                        "grows the allocator's pool and picks kernels) or its first chunk (default on the CPU)")
    t.add_argument("--json", help="also write the results here")
    measure.add_arguments(t)
    args = ap.parse_args(argv)
    return prepare(args) if args.cmd == "prepare" else time_all(args)


if __name__ == "__main__":
    sys.exit(main())
