"""followup workflow steps with a scripted chat model: items -> dialogues of every run a config asks for ->
extremes -> summary -> every table and figure, the neutral control's runs among them; and the study declaration.
The config section's schema, defaults and checks are in test_followup_config.py."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from followup_sections import DATASETS, REPO, ROOT, section, validated
from wobble.backends.base import Generation, render_prompt
from wobble.io import read_json, read_jsonl, write_json
from wobble.report.render import write_result
from wobble.report.spec import Figure, Table
from wobble.studies.followup import layout as L
from wobble.studies.followup.extractors import gold_answer
from wobble.studies.followup.pipeline import (extremes, infer, items_of, judge, run_dialogues, scores,
                                              select_items, summary_rows)
from wobble.studies.followup.prompts import BENCHMARKS, question_text, render_answer
from wobble.studies.followup.spec import SPEC, context

PAPER = REPO / "paper" / "followup"


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


@pytest.fixture(scope="module")
def paper():
    from wobble.studies.followup.prompts import load_paper_prompts
    return load_paper_prompts(PAPER)


def run_all(tmp_path: Path, paper, cfg: dict) -> tuple[dict, dict]:
    """Every step of the rules for model 'student'; returns the summary paths and the item selections."""
    sec = cfg["followup"]
    data = {d: records(d) for d in sec["datasets"]}
    student = Student(paper, data)
    sel = {d: select_items(d, data[d], n_items=sec["n_items"], n_heldout=sec["n_heldout"], seed=sec["seed"])
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


def test_spec_declares_the_issue_tables_and_figures():
    assert SPEC.name == "followup" and (REPO / SPEC.schema).is_file() and (REPO / SPEC.rules).is_file()
    names = {o.name for o in SPEC.outputs}
    assert names == {"figure3", "figure4", "figure5", "figure_prompts", "table2", "table3", "table5", "table6", "table8",
                     "table9", "table10", "table11", "table12", "table13", "table16", "table19", "table20"}
    for o in SPEC.outputs:
        assert all((REPO / p).is_file() for p in o.paper_inputs().values()) and o.caption
    assert set(SPEC.sources) == set(BENCHMARKS)
