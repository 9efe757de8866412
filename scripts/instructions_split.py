"""Snakemake entry point: the prompts of one (task set, condition, setting, seed) split."""
from wobble.studies.instructions.pipeline import make_proposer
from wobble.studies.instructions.splits import build_diverse_split, build_split, first_instances
from wobble.io import read_json, read_jsonl, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged

w, i, cfg = snakemake.wildcards, snakemake.input, snakemake.params.cfg
with logged(snakemake), tracked(snakemake, config=cfg, seeds=int(w.seed)):
    sel = read_json(i.selection)
    if w.taskset == "diverse":
        d = cfg["diverse"]
        recs = build_diverse_split(read_jsonl(i.diverse), sel["diverse"], d["examples_per_task"], int(w.seed),
                                   d.get("max_prompts"))
    else:
        tasks = {t["task"]: t for t in read_jsonl(i.tasks)}
        n = cfg[w.taskset]["instances_per_task"]
        insts = first_instances(read_jsonl(i.instances), sel[w.taskset], n)
        pool = {t: r["definition"] for t, r in tasks.items() if r["definition"] and r["split"] == "default"}
        para = {p["task"]: p["new_definitions"] for p in read_jsonl(i.para)} if "para" in i.keys() else None
        proposer = None
        if w.condition in ("insert_words", "replace_words"):
            proposer = make_proposer(cfg.get("masked_lm"), i.get("proposer"), snakemake.params.proposer_key)
        recs = build_split(w.taskset, w.condition, w.setting, int(w.seed), tasks, insts, pool=pool, proposer=proposer,
                           paraphrases=para, max_source_chars=cfg.get("max_source_chars"))
    write_jsonl(snakemake.output[0], recs)
