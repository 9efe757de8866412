"""Snakemake entry point: the prompts of one (task set, condition, setting, seed) split."""
from wobble.io import read_json, read_jsonl, write_jsonl
from wobble.provenance import tracked
from wobble.snake import logged
from wobble.studies.instructions.pipeline import make_proposer
from wobble.studies.instructions.splits import build_diverse_split, build_split, first_instances, shuffle_pool

w, i, cfg = snakemake.wildcards, snakemake.input, snakemake.params.cfg
with logged(snakemake), tracked(snakemake, config=cfg, seeds=int(w.seed)):
    sel = read_json(i.selection)
    if w.taskset == "diverse":
        recs = build_diverse_split(read_jsonl(i.diverse), sel["diverse"], cfg["n_examples_per_task"], int(w.seed),
                                   cfg.get("max_prompts"))
    else:
        tasks = {t["task"]: t for t in read_jsonl(i.tasks)}
        insts = first_instances(read_jsonl(i.instances), sel[w.taskset], cfg["n_instances_per_task"])
        para = {p["task"]: p["new_definitions"] for p in read_jsonl(i.para)} if "para" in i.keys() else None
        proposer = None
        if w.condition in ("insert_words", "replace_words"):
            # the masked LM from its materialized directory (the input), never by hub name
            proposer = make_proposer(i.get("masked_lm"), i.get("proposer"), cfg.get("proposer_model"))
        recs = build_split(w.taskset, w.condition, w.setting, int(w.seed), tasks, insts,
                           pool=shuffle_pool(tasks, w.taskset), proposer=proposer, paraphrases=para,
                           max_source_chars=cfg.get("max_source_chars"))
    write_jsonl(snakemake.output[0], recs)
