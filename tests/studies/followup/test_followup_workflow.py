"""followup workflow steps with a scripted chat model: items -> dialogues of every run a config asks for ->
extremes -> summary -> every table and figure; the config section's schema, defaults and checks through the
real validation (the study registered for the test), and the study declaration."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

import wobble.studies
from wobble.backends.base import Generation, render_prompt
from wobble.config import validate_config
from wobble.errors import ConfigError
from wobble.io import read_json, read_jsonl, write_json
from wobble.report.render import write_result
from wobble.report.spec import Figure, Table
from wobble.studies.followup import layout as L
from wobble.studies.followup.extractors import gold_answer
from wobble.studies.followup.pipeline import (extremes, infer, items_of, judge, run_dialogues, scores,
                                              select_items, summary_rows)
from wobble.studies.followup.prompts import BENCHMARKS, question_text, render_answer
from wobble.studies.followup.spec import SPEC, context

REPO = Path(__file__).resolve().parents[3]
ROOT = "results/followup"  # the study's folder in the default run
PAPER = REPO / "paper" / "followup"
DATASETS = ("multiarith", "strategyqa", "coin_flip", "csqa")


def records(dataset: str, n: int = 12) -> list[dict]:
    out = []
    for i in range(n):
        r = {"id": f"{dataset}-{i}", "dataset": dataset, "split": "test", "choices": None, "extra": {}}
        if dataset == "multiarith":
            r.update(question=f"Ann has {i} apples and gets {i + 2} more. How many?", answer=str(2 * i + 2),
                     answer_type="number")
        elif dataset == "csqa":
            r.update(question=f"Where is thing {i}?", choices=["A. here", "B. there", "C. nowhere"],
                     answer="ABC"[i % 3], answer_type="letter")
        else:
            r.update(question=f"Is statement {i} of {dataset} true?", answer="yes" if i % 3 else "no",
                     answer_type="yes/no")
        out.append(r)
    return out


class Student:
    """A scripted chat model: answers item i right at first when i is even; keeps its answer when asked
    "Are you sure?"-style questions, the emotional disturbance or the neutral control; gives it up on open-ended questions
    when i % 4 == 0; always gives in to a leading question; keeps its answer whenever the follow-up says
    "Let's think step by step." (the mitigation works)."""

    model_key = "student"
    supports_first_token_logprobs = False

    def __init__(self, paper, data):
        self.items = {}
        for dataset, recs in data.items():
            b = BENCHMARKS[dataset]
            for r in recs:
                gold = gold_answer(b, r)
                if b.answer_type == "number":
                    wrong = str(int(gold) + 1)
                elif b.answer_type == "letter":
                    wrong = "ABC"[("ABC".index(gold) + 1) % 3]
                else:
                    wrong = b.vocabulary[1] if gold == b.vocabulary[0] else b.vocabulary[0]
                self.items[question_text(r)] = (int(r["id"].rsplit("-", 1)[1]), render_answer(b, gold),
                                                render_answer(b, wrong))
        self.kinds = [(paper.template(q, v).split("{MA}")[0], q) for q in ("closed-ended", "open-ended", "leading")
                      for v in "ABC"] + [(paper.template(q, "A"), q) for q in ("emotional", "neutral")]

    def generate(self, prompts, params):
        out = []
        for p in prompts:
            start = max(i for i, m in enumerate(p) if m["role"] == "user" and any(
                m["content"].startswith(q) for q in self.items))
            i, right, wrong = next(v for q, v in self.items.items() if p[start]["content"].startswith(q))
            said = [m["content"] for m in p[start:] if m["role"] == "assistant"]
            last = p[-1]["content"]
            kind = next((k for prefix, k in self.kinds if last.startswith(prefix)), None) if said else None
            if not said:
                text = f"Let me think.\nAnswer: {right if i % 2 == 0 else wrong}"
            elif "Let's think step by step." in last or kind in ("closed-ended", "emotional", "neutral"):
                text = said[-1]
            elif kind == "open-ended":
                text = f"Apologies.\nAnswer: {wrong}" if i % 4 == 0 else said[-1]
            else:
                text = f"You are right, I apologize.\nAnswer: {wrong}"
            out.append(Generation(text=text, rendered_prompt=render_prompt(self, p), finish_reason="stop"))
        return out


class Judge:
    """A judge that calls every change of mind a direct answer modification (Error#3), except on CoinFlip."""

    model_key = "judge"
    supports_first_token_logprobs = False

    def generate(self, prompts, params):
        return [Generation(text="I cannot tell." if "coin" in p[0]["content"] else "Error type: 3",
                           rendered_prompt=render_prompt(self, p)) for p in prompts]


def section(**overrides) -> dict:
    sec = {"models": ["student"], "datasets": list(DATASETS), "n_items": 8, "n_heldout": 4, "bootstrap": {"n": 50},
           "max_new_tokens": 16, "judge_model": "student", "n_judge_examples": 3, **overrides}
    return sec


def validated(sec: dict, monkeypatch, model_keys: tuple[str, ...] = ("student",)) -> dict:
    monkeypatch.setitem(wobble.studies.STUDIES, "followup", "wobble.studies.followup.spec")
    cfg = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    for key in model_keys:
        cfg["models"][key] = {"source": "tiny", "kind": "causal", "seed": 0, "chat_template": True}
    cfg["followup"] = sec
    return validate_config(cfg, REPO / "schemas" / "config.schema.yaml")


@pytest.fixture(scope="module")
def paper():
    from wobble.studies.followup.prompts import load_paper_prompts
    return load_paper_prompts(PAPER)


def run_all(tmp_path: Path, paper, cfg: dict) -> tuple[dict, dict]:
    """Every step of the rules for model 'student'; returns the summary paths and the item selections."""
    sec = cfg["followup"]
    data = {d: records(d) for d in sec["datasets"]}
    student = Student(paper, data)
    sel = {d: select_items(d, data[d], n_items=sec["n_items"], heldout=sec["n_heldout"], seed=sec["seed"])
           for d in data}
    done = {}

    def run(r: L.Run):
        out = tmp_path / L.run_path(ROOT, "student", r)
        if r in done:
            return out
        ext = None
        if r.label.split("_")[1] in ("Max", "Min"):
            ext_path = tmp_path / L.extremes_path(ROOT, "student", r.dataset)
            ext = extremes(rec for dr in L.direct_runs_for_extremes(sec, "student", r.dataset)
                           for rec in read_jsonl(run(dr)))
            write_json(ext_path, ext)
        ev, held = items_of(sel[r.dataset], data[r.dataset])
        dialogues = run_dialogues(paper, r.dataset, r.label, ev, held, seed=sec["seed"], gate=sec["gate"],
                                  shots=sec["shots"], extremes=ext)
        infer(student, dialogues, out, temperature=float(r.temperature), sample_seed=sec["sample_seed"],
              max_new_tokens=sec["max_new_tokens"], chunk_size=sec["chunk_size"])
        done[r] = out
        return out

    for r in L.runs(sec, "student"):
        run(r)
    rows = summary_rows([rec for r in L.runs(sec, "student") for rec in read_jsonl(run(r))], n_boot=50, seed=0)
    path = tmp_path / L.summary_path(ROOT, "student")
    pd.DataFrame(rows).to_csv(path, index=False)
    judged = tmp_path / L.judge_path(ROOT, "student")
    judge(Judge(), [rec for r in L.judge_runs(sec, "student") for rec in read_jsonl(run(r))], judged,
          n=sec["n_judge_examples"], seed=sec["seed"], max_new_tokens=8)
    return {"summaries": [str(path)], "judged": [str(judged)]}, sel


def test_every_step_to_every_table(tmp_path, paper, monkeypatch):
    cfg = validated(section(), monkeypatch)
    inputs, sel = run_all(tmp_path, paper, cfg)
    summary = pd.read_csv(inputs["summaries"][0], dtype={"temperature": str, "round": str})
    ev = {d: [int(i.rsplit("-", 1)[1]) for i in sel[d]["eval"]] for d in DATASETS}
    right = {d: sum(i % 2 == 0 for i in ev[d]) for d in DATASETS}

    def get(run, dataset, rnd="1", temperature="0.5"):
        return summary[(summary["run"] == run) & (summary["dataset"] == dataset) & (summary["round"] == rnd)
                       & (summary["temperature"] == temperature)].iloc[0]

    for d in DATASETS:
        before = 100 * right[d] / 8
        assert get("direct_CA_none", d)["before"] == pytest.approx(before)
        assert get("direct_CB_none", d)["modification"] == pytest.approx(0.0)
        assert get("direct_LC_none", d)["modification_rate_pct"] == pytest.approx(100.0)
        assert get("direct_OA_none", d)["modification"] == pytest.approx(100 * sum(i % 4 == 0 for i in ev[d]) / 8)
        prog = [get("progressive_A_none", d, str(k))["modification"] for k in (1, 2, 3)]
        assert prog == pytest.approx([0.0, 100 * sum(i % 4 == 0 for i in ev[d]) / 8, before])
    assert get("direct_LA_none", "multiarith")["e_to_r_rate_pct"] == pytest.approx(0.0)
    assert get("direct_LA_cot_followup", "multiarith")["modification"] == pytest.approx(0.0)
    assert get("direct_LA_cot_initial", "multiarith")["modification_rate_pct"] == pytest.approx(100.0)
    assert get("direct_OA_none", "coin_flip", temperature="0")["before"] == pytest.approx(100 * right["coin_flip"] / 8)
    assert get("direct_CA_fewshot", "strategyqa")["modification"] == pytest.approx(0.0)
    assert set(summary[summary["run"] == "progressive_Max_none"]["variant"]) <= {"A", "B", "C"}
    # open-ended questions make the student give up, closed ones never: Max picks an open annotator with M. > 0
    ext = read_json(tmp_path / L.extremes_path(ROOT, "student", "csqa"))
    assert len(ext["Max"]) == 3 and len(ext["Min"]) == 3 and ext["Min"][0] == "A"

    ctx = context(cfg)
    for out in SPEC.outputs:
        result = out.builder()({**inputs, **{k: str(REPO / v) for k, v in out.paper_inputs().items()}}, ctx)
        assert isinstance(result, Table if out.kind == "table" else Figure), out.name
        table = result if isinstance(result, Table) else result.table
        assert len(table.display) and table.notes, out.name
        write_result(result, table_stem=tmp_path / "tables" / out.name, figure_stem=tmp_path / "figures" / out.name)
        assert (tmp_path / "tables" / f"{out.name}.md").is_file()
    t8 = pd.read_csv(tmp_path / "tables" / "table8.csv")
    ours = t8[(t8["side"] == "ours") & (t8["dataset"] == "MultiArith") & (t8["prompt"] == "A")
              & (t8["question_type"] == "leading") & (t8["measure"] == "modification_rate_pct")]
    assert ours["value"].tolist() == [100.0]
    paper8 = t8[(t8["side"] == "paper") & (t8["dataset"] == "MultiArith") & (t8["prompt"] == "A")
                & (t8["question_type"] == "leading") & (t8["measure"] == "modification_rate_pct")]
    assert paper8["value"].tolist() == [78.73]
    f5 = pd.read_csv(tmp_path / "figures" / "figure5.csv")
    share = {(r.dataset, str(r.error_type)): r.share_pct for r in f5.itertuples()}
    assert share[("multiarith", "3")] == 100.0 and share[("coin_flip", "unlabelled")] == 100.0
    assert set(f5[f5["dataset"] == "multiarith"]["n"]) == {min(3, right["multiarith"])}  # n_judge_examples = 3
    md = (tmp_path / "tables" / "table6.md").read_text()
    assert "w/ Zero-shot-CoT (only the follow-up input)" in md and "student" in md
    # Table 2: each of ours sits on the paper's row (Direct rows have no round; Progressive rows round 1-3)
    t2 = SPEC.output("table2").builder()({**inputs, "paper_table2": str(PAPER / "table2.csv")},
                                         {**ctx, "paper_models": {"student": "Vicuna-13B"}})
    rows = t2.display[t2.display["Model (ours)"] == "student"]
    direct = rows[(rows["Form"] == "Direct") & (rows["Task"] == "Math") & (rows["Question"] == "leading")]
    assert direct["Round"].tolist() == [""] and direct["M. (paper)"].tolist() == ["30.67"]
    assert len(t2.display) == 2 * 4 * 3 * 2  # (Direct 3 questions + Progressive 3 rounds) x 4 task types x 2 paper models


def test_the_neutral_control_is_in_the_scores_and_leaves_every_table_and_figure_byte_identical(tmp_path, paper,
                                                                                           monkeypatch):
    """wobble's neutral control (followup.neutral_control): one Direct-Form dialogue per evaluated item of every
    dataset, its one round the neutral follow-up (annotator slot A, no mitigation, the model's temperature), in
    the item scores as any Direct-Form run; every table and figure, built from the summary with and without its
    rows, writes the same bytes (the builders keep the paper's question types only)."""
    cfg = validated(section(), monkeypatch)
    inputs, sel = run_all(tmp_path, paper, cfg)
    control = [rec for d in DATASETS for rec in read_jsonl(tmp_path / L.run_path(ROOT, "student", L.Run(d, "direct_NA_none", "0.5")))]
    got = scores(control)
    assert sorted((s["dataset"], s["item"]) for s in got) == sorted((d, i) for d in DATASETS for i in sel[d]["eval"])
    for s in got:
        assert (s["form"], s["mitigation"], s["temperature"], s["run"]) == ("direct", "none", "0.5", "direct_NA_none")
        assert [(r["question_type"], r["variant"]) for r in s["rounds"]] == [("neutral", "A")]
        assert s["correct"][1] == s["correct"][0]  # the student keeps its answer when not challenged
    summary = pd.read_csv(inputs["summaries"][0], dtype={"temperature": str, "round": str})
    assert set(summary.loc[summary["question_type"] == "neutral", "run"]) == {"direct_NA_none"}
    assert (summary.loc[summary["run"] == "direct_NA_none", "modification"] == 0).all()
    without = tmp_path / "without.csv"
    summary[summary["question_type"] != "neutral"].to_csv(without, index=False)
    ctx = context(cfg)
    for out in SPEC.outputs:
        paper_inputs = {k: str(REPO / v) for k, v in out.paper_inputs().items()}
        for side, summaries in (("with", inputs["summaries"]), ("without", [str(without)])):
            result = out.builder()({**inputs, "summaries": summaries, **paper_inputs}, ctx)
            write_result(result, table_stem=tmp_path / side / "tables" / out.name,
                         figure_stem=tmp_path / side / "figures" / out.name)
    written = sorted(p.relative_to(tmp_path / "with") for p in (tmp_path / "with").rglob("*") if p.is_file())
    assert written == sorted(p.relative_to(tmp_path / "without") for p in (tmp_path / "without").rglob("*")
                             if p.is_file())
    assert {p.stem for p in written} == {o.name for o in SPEC.outputs}
    for rel in written:
        assert (tmp_path / "with" / rel).read_bytes() == (tmp_path / "without" / rel).read_bytes(), rel
    assert "neutral" not in "".join((tmp_path / "with" / rel).read_text(encoding="utf-8") for rel in written
                                    if rel.suffix in (".md", ".csv"))


def test_schema_defaults_and_the_runs_a_default_config_asks_for(monkeypatch):
    sec = validated({"models": ["student"]}, monkeypatch)["followup"]
    assert sec["datasets"] == list(BENCHMARKS) and sec["variants"] == ["A", "B", "C"] and sec["gate"] == "all"
    assert sec["temperature"] == 0.5 and sec["temperatures"] == [0, 1.0] and sec["progressive_sets"] == ["A", "Max", "Min"]
    assert sec["neutral_control"] is True
    runs = L.runs(sec, "student")
    # 8 datasets x (9 direct + 3 progressive); 3 focus datasets x (2 temperatures + 8 mitigations x 3 + 2 + 1);
    # 8 datasets x 1 neutral control
    assert len(runs) == 8 * 12 + 3 * (2 + 24 + 2 + 1) + 8 and len(set(runs)) == len(runs)
    assert L.Run("gsm8k", "direct_NA_none", "0.5") in runs
    assert L.Run("multiarith", "direct_LB_fewshot_cot_followup", "0.5") in runs
    assert L.Run("coin_flip", "direct_OA_none", "1") in runs and L.Run("strategyqa", "direct_EA_none", "0.5") in runs
    assert all(re.fullmatch(r"(direct|progressive)_[A-Za-z.]+_[a-z_]+", r.label) for r in runs)
    assert L.run_path(ROOT, "m", runs[0]) == "results/followup/predictions/m/T0.5/gsm8k/direct_CA_none.jsonl"


def test_mitigation_variants_narrow_only_the_mitigation_runs(monkeypatch):
    """``mitigation_variants`` takes the mitigation runs to its annotators; the plain Direct Form keeps ``variants``."""
    sec = validated(section(datasets=["coin_flip"], variants=["A", "B"], mitigations=["cot_both", "fewshot"],
                            progressive_sets=["A"], progressive_mitigations=[], temperatures=[], emotional=False,
                            neutral_control=False, mitigation_variants=["A"]), monkeypatch)["followup"]
    labels = {r.label for r in L.runs(sec, "student")}
    assert labels == {"direct_CA_none", "direct_CB_none", "direct_OA_none", "direct_OB_none", "direct_LA_none",
                      "direct_LB_none", "progressive_A_none", "direct_OA_cot_both", "direct_OA_fewshot"}
    sec["mitigation_variants"] = None  # the default: every variant, as the paper's Table 6
    labels = {r.label for r in L.runs(sec, "student")}
    assert {"direct_OB_cot_both", "direct_OB_fewshot"} <= labels and len(labels) == 11
    with pytest.raises(ConfigError, match=r"'followup.mitigation_variants\[0\]': expected one of \['A', 'B', 'C'\]"):
        validated(section(mitigation_variants=["D"]), monkeypatch)


def test_every_run_has_one_job_rule_a_run_group_a_sweep_group_or_followup_infer(monkeypatch):
    """One job per model and dataset asks every run at the model's own temperature except the Max / Min
    Progressive ones (they wait for the extremes of these), the neutral control included; one job per model,
    dataset and other temperature asks the sweep's runs there; rule followup_infer (its run wildcard limited to
    Max / Min) makes the rest, so each file has exactly one rule."""
    sec = validated(section(datasets=["coin_flip", "gsm8k"], variants=["A", "B"], mitigations=["cot_both"],
                            progressive_sets=["A", "Max"], temperatures=[0, 1], mitigation_variants=["A"]),
                    monkeypatch)["followup"]
    groups = L.run_groups(sec)
    assert [(m, d) for m, d, _ in groups] == [("student", "coin_flip"), ("student", "gsm8k")]
    grouped = [r for _, _, rs in groups for r in rs]
    assert len(grouped) == len(set(grouped)) and {r.temperature for r in grouped} == {"0.5"}
    assert {r.label for r in groups[1][2]} == {"direct_CA_none", "direct_CB_none", "direct_OA_none",
                                               "direct_OB_none", "direct_LA_none", "direct_LB_none",
                                               "progressive_A_none", "direct_NA_none"}
    assert L.sweep_groups(sec) == [("student", "coin_flip", [L.Run("coin_flip", "direct_OA_none", "0")]),
                                   ("student", "coin_flip", [L.Run("coin_flip", "direct_OA_none", "1")])]
    jobs = L.infer_groups(sec)
    assert [name for name, *_ in jobs] == ["followup_infer_student_coin_flip", "followup_infer_student_gsm8k",
                                           "followup_infer_student_coin_flip_T0", "followup_infer_student_coin_flip_T1"]
    in_jobs = [r for *_, rs in jobs for r in rs]
    assert len(in_jobs) == len(set(in_jobs))
    alone = set(L.runs(sec, "student")) - set(in_jobs)
    assert alone == {L.Run("coin_flip", "progressive_Max_none", "0.5"), L.Run("gsm8k", "progressive_Max_none", "0.5")}
    assert all(re.fullmatch(L.EXTREMES_RUN, r.label) for r in alone)
    assert not any(re.fullmatch(L.EXTREMES_RUN, r.label) for r in in_jobs)
    assert L.group_rule_name("qwen2.5-coder-0.5b-instruct", "coin_flip") == (
        "followup_infer_qwen2_5_coder_0_5b_instruct_coin_flip")
    assert L.group_rule_name("student", "coin_flip", "0.7") == "followup_infer_student_coin_flip_T0_7"


def test_the_judges_runs_are_asked_even_where_the_config_runs_no_such_question(monkeypatch):
    """Figure 5's judge labels the focus question's runs; a config without that question type still gets them
    asked, in the model's run group (no other rule makes them)."""
    sec = validated(section(datasets=["coin_flip"], question_types=["closed-ended"], variants=["A"],
                            progressive_sets=["A"]),
                    monkeypatch)["followup"]
    assert sec["judge_model"]
    judged = L.judge_runs(sec, "student")
    assert judged and not set(judged) <= set(L.runs(sec, "student"))
    assert set(judged) <= {r for _, _, rs in L.run_groups(sec) for r in rs}
    assert not set(judged) & {r for _, _, rs in L.run_groups({**sec, "judge_model": None}) for r in rs}


def test_the_neutral_control_is_one_run_of_each_models_run_group_on_every_dataset(monkeypatch):
    """followup.neutral_control (default on): on every dataset, focus or not, for every model, one run
    direct_NA_none at the model's own temperature, inside the run group of that model and dataset (no job of
    its own), never at Table 3's other temperatures, never judged; off, no such run."""
    keys = ("student", "tutor")
    sec = validated(section(models=list(keys), datasets=["mmlu", "coin_flip"], model_temperature={"tutor": 0.7},
                            temperatures=[0]), monkeypatch, keys)["followup"]
    groups = L.run_groups(sec)
    assert [(m, d) for m, d, _ in groups] == [(m, d) for m in keys for d in ("mmlu", "coin_flip")]
    grouped = {r for _, _, rs in groups for r in rs}
    for model, dataset, group in groups:
        control = [r for r in group if r.label == "direct_NA_none"]
        base = "0.7" if model == "tutor" else "0.5"
        assert control == [L.Run(dataset, "direct_NA_none", base)], (model, dataset)
        assert control[0] not in L.judge_runs(sec, model)
    assert all(r in grouped for m in keys for r in L.runs(sec, m) if r.label == "direct_NA_none")
    assert L.neutral_label() == "direct_NA_none"
    off = validated(section(models=list(keys), datasets=["mmlu", "coin_flip"], neutral_control=False), monkeypatch,
                    keys)["followup"]
    assert all(r.label != "direct_NA_none" for m in keys for r in L.runs(off, m))
    # the control adds one run to each group and changes no other run
    assert [[r for r in rs if r.label != "direct_NA_none"] for _, _, rs in groups] == [
        rs for _, _, rs in L.run_groups({**sec, "neutral_control": False})]


def test_judge_runs_are_the_focus_question_of_every_annotator_at_the_models_temperature(monkeypatch):
    """Figure 5's error examples (§3.3): StrategyQA closed-ended, CoinFlip open-ended, MultiArith leading, each
    prompt of followup.variants; a non-focus dataset (MMLU) and the other temperatures give none."""
    sec = validated(section(datasets=["mmlu", "coin_flip", "multiarith"], variants=["A", "B"], temperatures=[0]),
                    monkeypatch)["followup"]
    assert L.judge_runs(sec, "student") == [L.Run("coin_flip", "direct_OA_none", "0.5"),
                                            L.Run("coin_flip", "direct_OB_none", "0.5"),
                                            L.Run("multiarith", "direct_LA_none", "0.5"),
                                            L.Run("multiarith", "direct_LB_none", "0.5")]
    assert set(L.judge_runs(sec, "student")) <= set(L.runs(sec, "student"))


@pytest.mark.parametrize("override, expected", [
    ({"datasets": ["gsm9k"]}, r"'followup.datasets\[0\]': expected one of \['gsm8k', 'svamp'"),
    ({"question_types": ["sneaky"]}, r"'followup.question_types\[0\]': expected one of \['closed-ended'"),
    ({"variants": ["D"]}, r"'followup.variants\[0\]': expected one of \['A', 'B', 'C'\]"),
    ({"mitigations": ["prayer"]}, r"'followup.mitigations\[0\]': expected one of \['emotion_initial'"),
    ({"progressive_sets": ["Median"]}, r"'followup.progressive_sets\[0\]': expected one of \['A', 'B', 'C', 'Max'"),
    ({"paper_models": {"student": "GPT-5"}}, r"'followup.paper_models.student': expected one of \['ChatGPT'"),
    ({"paper_models": {"other": "ChatGPT"}}, r"'followup.paper_models.other': a model of followup.models"),
    ({"question_types": ["leading"]}, r"'followup.progressive_sets': Max / Min need followup.question_types"),
    ({"n_heldout": 2}, r"'followup.n_heldout': at least followup.shots \(4\) held-out items"),
    ({"temperature": 0, "temperatures": [0, 1]}, r"'followup.temperatures': the sweep's other temperatures only"),
    ({"judge": "student"}, r"^config: followup.judge is retired: use followup.judge_model$"),
    ({"models": ["nope"]}, r"'followup.models\[0\]': model key 'nope' is not defined"),
    ({"judge_model": "nope"}, r"'followup.judge_model': model key 'nope' is not defined"),
    ({"neutral_control": "yes"}, r"'followup.neutral_control': expected boolean, got str 'yes'"),
])
def test_bad_config_stops_before_any_job_with_one_line(monkeypatch, override, expected):
    with pytest.raises(ConfigError, match=expected):
        validated(section(**override), monkeypatch)


def test_model_keys_equal_but_for_punctuation_stop_before_any_job(monkeypatch):
    """Two keys that give one run-group rule name (layout.group_rule_name) would make Snakemake fail on a
    duplicate rule, far from the config; the config check names the second key instead."""
    keys = ("student", "stu.dent", "stu-dent")
    validated(section(models=["student", "stu.dent"]), monkeypatch, keys)
    with pytest.raises(ConfigError, match=r"'followup.models\[2\]': a model key that differs from 'stu.dent' "
                                          r"in more than punctuation .*got 'stu-dent'"):
        validated(section(models=list(keys)), monkeypatch, keys)


def test_resolving_run_labels():
    c, s = L.resolve("progressive_B_cot_both")
    assert c.id == "progressive_CB.OB.LB_cot_both" and s == "B"
    c, s = L.resolve("progressive_Max_none", {"Max": ["C", "A", "B"], "Min": ["A", "A", "A"]})
    assert c.id == "progressive_CC.OA.LB_none" and s == "Max"
    with pytest.raises(ConfigError, match="Direct-Form results to choose the Min set"):
        L.resolve("progressive_Min_none", {"Max": [], "Min": []})
    assert L.resolve("direct_EA_none")[0].rounds == (("emotional", "A"),)


def test_spec_declares_the_issue_tables_and_figures():
    assert SPEC.name == "followup" and (REPO / SPEC.schema).is_file() and (REPO / SPEC.rules).is_file()
    names = {o.name for o in SPEC.outputs}
    assert names == {"figure3", "figure4", "figure5", "figure_prompts", "table2", "table3", "table5", "table6", "table8",
                     "table9", "table10", "table11", "table12", "table13", "table16", "table19", "table20"}
    for o in SPEC.outputs:
        assert all((REPO / p).is_file() for p in o.paper_inputs().values()) and o.caption
    assert set(SPEC.sources) == set(BENCHMARKS)
