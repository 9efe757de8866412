"""The instructions study's declaration (spec.py) and its run/path/params enumeration (layout.py), on the
smoke config: which files each table reads, which keys each rule gets, the footnote context, the checks."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from wobble.config import validate_config
from wobble.errors import ConfigError
from wobble.studies.instructions import layout
from wobble.studies.instructions.spec import SPEC, check, context

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def smoke():
    cfg = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    return validate_config(cfg, REPO / "schemas" / "config.schema.yaml")


def test_every_output_is_declared_completely():
    names = [o.name for o in SPEC.outputs]
    assert names == [f"table{i}" for i in range(1, 12)] + ["figure_drop"]
    for o in SPEC.outputs:
        assert callable(o.builder()), o.name
        for stem in o.paper:
            assert (REPO / "paper" / "instructions" / f"{stem}.csv").is_file(), (o.name, stem)
        assert len(o.caption) > 150 and "–" in o.caption, o.name  # says what it shows and what "–" means
    assert SPEC.output("figure_drop").paper == ("table4",)
    assert SPEC.targets({})[-2:] == ["results/instructions/figures/figure_drop.png", "results/instructions/findings.md"]


def test_runs_of_the_smoke_config(smoke):
    main = layout.runs(smoke, "main")
    # 3 conditions x 2 settings x 1 seed on english and xlingual, 4 para conditions, 1 diverse run
    assert len(main) == 2 * 3 * 2 + 4 + 1
    assert ("tiny-causal-ni", "para", "paraphrase_3", "w_exam", 1) in main
    assert layout.runs(smoke, "second") == [("tiny-t5", ts, c, "w_exam", 1) for ts in ("english", "xlingual")
                                          for c in ("original", "insert_words", "shuffle_instructions")]
    no_second = copy.deepcopy(smoke)
    no_second["instructions"]["models"] = no_second["instructions"]["models"][:1]
    assert layout.runs(no_second, "second") == []
    with pytest.raises(KeyError, match="unknown model role"):
        layout.runs(smoke, "third")


def test_one_inference_job_makes_every_condition_of_a_task_set(smoke):
    """The inference rules' outputs: one predictions file per condition, in the order of the splits, covering
    exactly the runs of layout.runs (no run without a job, no job output nobody reads)."""
    assert layout.taskset_conditions(smoke, "english") == ("original", "insert_words", "shuffle_instructions")
    assert layout.taskset_conditions(smoke, "para") == layout.PARA_CONDITIONS
    assert layout.taskset_conditions(smoke, "diverse") == ("diverse_prompt",)
    with pytest.raises(KeyError, match="unknown task set"):
        layout.taskset_conditions(smoke, "klingon")
    assert layout.infer_splits(smoke, "para")[1] == (
        "results/instructions/splits/para/paraphrase_1/{setting}/seed{seed}.jsonl")
    assert layout.infer_outputs(smoke, "para")[1] == (
        "results/instructions/predictions/{model}/para/paraphrase_1/{setting}/seed{seed}.jsonl")
    every = layout.runs(smoke, "main") + layout.runs(smoke, "second")
    made = {p.format(model=m, setting=st, seed=s) for m, ts, _, st, s in every for p in layout.infer_outputs(smoke, ts)}
    wanted = {layout.study_file(smoke, layout.PREDICTIONS).format(model=m, taskset=ts, condition=c, setting=st, seed=s)
              for m, ts, c, st, s in every}
    assert made == wanted


def test_each_output_reads_only_what_it_needs(smoke):
    t4 = SPEC.output("table4").inputs(smoke)
    assert set(t4) == {"scores", "selection"} and len(t4["scores"]) == 6
    assert t4["scores"][0] == "results/instructions/scores/tiny-causal-ni/english/original/wo_exam/seed1.json"
    t5 = SPEC.output("table5").inputs(smoke)
    assert [p.split("/")[3:6] for p in t5["scores"]] == [["tiny-t5", "english", c] for c in
                                                         ("original", "insert_words", "shuffle_instructions")]
    assert SPEC.output("table8").inputs(smoke) == {
        "scores": ["results/instructions/scores/tiny-causal-ni/diverse/diverse_prompt/wo_exam/seed1.json"]}
    assert set(SPEC.output("figure_drop").inputs(smoke)) == {"scores"}
    assert SPEC.output("table3").inputs(smoke) == {"perturbations": "results/instructions/splits/table3_perturbations.json"}
    assert SPEC.output("table1").inputs(smoke) == {"tasks": "resources/prepared/superni_tasks.jsonl",
                                                   "instances": "resources/prepared/superni_test.jsonl"}
    assert SPEC.output("table7").paper_inputs() == {"paper_table7": "paper/instructions/table7.csv"}


def test_rules_get_only_the_keys_they_read(smoke):
    changed = copy.deepcopy(smoke)
    changed["instructions"]["max_new_tokens"] = 99
    changed["instructions"]["finetune"]["max_steps"] = 99
    changed["instructions"]["deviations"] = ["something else"]
    for ts, cond in (("english", "original"), ("english", "insert_words"), ("diverse", "diverse_prompt"),
                     ("para", "paraphrase_1")):
        assert layout.split_params(smoke, ts, cond) == layout.split_params(changed, ts, cond)
    assert layout.selection_params(smoke) == layout.selection_params(changed)
    assert layout.table3_params(smoke) == layout.table3_params(changed)
    assert layout.infer_params(changed) == {"max_new_tokens": 99}
    assert layout.split_params(smoke, "english", "original") == {"n_instances_per_task": 1, "max_source_chars": 1200}
    assert layout.split_params(smoke, "english", "insert_words") == {
        "n_instances_per_task": 1, "max_source_chars": 1200, "masked_lm": None, "proposer_model": "tiny-causal"}
    assert layout.split_params(smoke, "diverse", "diverse_prompt") == {"n_examples_per_task": 1, "max_prompts": 2}
    assert layout.split_inputs(smoke, "english", "insert_words")["proposer"] == "resources/models/tiny-causal"
    assert "proposer" not in layout.split_inputs(smoke, "english", "original")
    assert layout.finetune_params(smoke, "tiny-causal-ni")["method"] == "lora"


def test_context_names_models_with_the_shared_label(smoke):
    ctx = context(smoke)
    assert list(ctx["models"]) == ["tiny-causal-ni", "tiny-t5"]
    assert ctx["models"]["tiny-t5"] == "tiny-t5 (tiny: seed 0, seq2seq); prompt = plain Tk-Instruct text"
    chat = copy.deepcopy(smoke)
    chat["instructions"]["chat_models"] = ["tiny-t5"]
    assert context(chat)["models"]["tiny-t5"].endswith("; prompt = one user turn through its chat template")
    assert ctx["models"]["tiny-causal-ni"].startswith("tiny-causal-ni = tiny-causal (tiny: seed 0, causal) + lora")
    assert ctx["scale"] == "smoke" and ctx["seeds"] == [1]
    assert any("causal LM tiny-causal" in d for d in ctx["deviations"])


def test_each_model_s_tables_carry_its_own_deviations():
    """Tables 5 and 11 (the second model) describe the second model, not the main model's finetune: a model the
    workflow does not finetune says so, from the config; instructions.model_deviations go to their model only."""
    from wobble.studies.instructions.table_parts import common_notes

    config = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()), REPO / "schemas" / "config.schema.yaml")
    cfg = config["instructions"]
    main, second = cfg["models"]
    ctx = context(config)
    assert ctx["model_deviations"][main] == cfg["model_deviations"][main]  # finetuned here: the config's lines
    shipped = ctx["model_deviations"][second]
    assert len(shipped) == 1 and shipped[0].startswith(f"{second} is used as shipped")
    assert "not finetuned on SuperNI train" in shipped[0] and "T5-11B" in shipped[0]
    notes_second = common_notes(ctx, [], [second])
    assert not any("LoRA" in n for n in notes_second) and any(n.startswith(f"Deviation ({second}):")
                                                              for n in notes_second)
    assert any("LoRA" in n for n in common_notes(ctx, [{"model": main}]))
    assert not any(n.startswith("Deviation (") for n in common_notes(ctx, []))  # data tables: no model's


def test_check_cross_field(smoke):
    check(smoke["instructions"])
    dup = dict(smoke["instructions"], seeds=[1, 1])
    with pytest.raises(ConfigError, match="instructions.seeds"):
        check(dup)
    no_proposer = {k: v for k, v in smoke["instructions"].items() if k != "proposer_model"}
    with pytest.raises(ConfigError, match="instructions.proposer_model.*insert_words"):
        check(no_proposer)
    check(dict(no_proposer, conditions=["original"]))
    # a key the study does not use is harmless (config files merge: overriding models leaves chat_models)
    check(dict(smoke["instructions"], chat_models=["gemma"]))
    check(dict(smoke["instructions"], chat_models=[smoke["instructions"]["models"][1]]))


def test_footnotes_state_the_papers_facts_and_the_mirrors_counts():
    """The train-split footnote (instructions.deviations of the default and paper configs) says what the paper
    says (1,462 train tasks, §3) and what the mirror holds (its coverage.tsv: mirrored / all English train tasks)."""
    cov = REPO.parent / "shared" / "data" / "superni" / "coverage.tsv"
    counts = None
    if cov.is_file():
        rows = [line.split("\t") for line in cov.read_text().splitlines()[1:] if line.strip()]
        train = [r for r in rows if r[1] == "train"]
        counts = (sum(r[2] != "missing" for r in train), len(train))
    for name in ("config.yaml", "configs/paper.yaml"):
        section = yaml.safe_load((REPO / name).read_text())["instructions"]
        notes = section["deviations"] + [d for v in (section.get("model_deviations") or {}).values() for d in v]
        train_note = next(n for n in notes if "train" in n)
        assert "1,462" in train_note and "all 756" not in train_note and "on 756" not in train_note, name
        if counts:
            assert f"{counts[0]} of the {counts[1]} English" in train_note, name


def test_one_masked_lm_name_everywhere(smoke):
    from wobble.studies.instructions.spec import PAPER_MASKED_LM

    paper = yaml.safe_load((REPO / "configs" / "paper.yaml").read_text())
    assert paper["instructions"]["masked_lm"] == PAPER_MASKED_LM
    files = [REPO / "config.yaml", REPO / "configs" / "paper.yaml", REPO / "schemas" / "studies" /
             "instructions.schema.yaml", *sorted((REPO / "src" / "wobble" / "studies" / "instructions").glob("*.py"))]
    for f in files:
        text = f.read_text()
        assert "bert-base-uncased" not in text, f
        if "masked_lm" in text and f.suffix == ".yaml":
            assert PAPER_MASKED_LM in text, f
    assert any(PAPER_MASKED_LM in d for d in context(smoke)["deviations"])
