"""Build functions of the instructions study's tables and figure (declared in
wobble.studies.instructions.spec, written by the shared renderer wobble.report.render).

Ours come from the SYNTHETIC score files in tests/fixtures/instructions/ (see its README); the paper's
numbers from the real paper CSVs. Every expected value below is computed by hand in the comment beside it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from wobble.errors import DataError
from wobble.report.render import render
from wobble.report.spec import Figure, Table
from wobble.studies.instructions.conditions import PAPER_CONDITIONS
from wobble.studies.instructions.spec import SPEC
from wobble.studies.instructions.table_parts import PAPER_SETTINGS, load_scores
from wobble.studies.instructions.tables_diverse import match_prompts
from wobble.studies.instructions.tables_text import paper_result_text

REPO = Path(__file__).resolve().parents[3]
FIX = REPO / "tests" / "fixtures" / "instructions"
PAPER = next((p for p in (REPO / "paper" / "instructions", REPO.parent / "shared" / "paper" / "instructions")
              if (p / "table4.csv").is_file()), None)
pytestmark = pytest.mark.skipif(PAPER is None, reason="paper CSVs (paper/instructions/) are not present")

SCORES = sorted(str(p) for p in (FIX / "scores").rglob("*.json"))
CONTEXT = {"scale": "fixture",
           "models": {"fixture-main": "main fixture model", "fixture-second": "second fixture model"},
           "seeds": [1, 2], "data_note": "synthetic fixture data", "deviations": ["a synthetic deviation"]}
IDS = [f"table{i}" for i in range(1, 12)] + ["figure_drop"]


def _inputs(table_id: str, **over) -> dict:
    """Every fixture input (a build reads the names it declares and ignores the rest) + its paper CSVs."""
    paper = {f"paper_{p}": str(PAPER / f"{p}.csv") for p in SPEC.output(table_id).paper}
    return {**paper, "scores": SCORES, "tasks": str(FIX / "tasks.jsonl"),
            "instances": str(FIX / "instances.jsonl"), "para": str(FIX / "para.jsonl"),
            "perturbations": str(FIX / "perturbations.json"), "selection": str(FIX / "selection.json"), **over}


def _render(table_id: str, out: Path, inputs: dict | None = None, context: dict | None = None) -> list[Path]:
    return render(SPEC.output(table_id), _inputs(table_id) if inputs is None else inputs,
                  CONTEXT if context is None else context,
                  table_stem=out / "tables" / table_id, figure_stem=out / "figures" / table_id)


def _render_all(out: Path) -> dict[str, list[Path]]:
    return {t: _render(t, out) for t in IDS}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    return out, _render_all(out)


def md(rendered, table_id: str) -> str:
    return (rendered[0] / "tables" / f"{table_id}.md").read_text(encoding="utf-8")


def tidy(rendered, table_id: str) -> pd.DataFrame:
    folder = "figures" if table_id.startswith("figure") else "tables"
    return pd.read_csv(rendered[0] / folder / f"{table_id}.csv")


def md_rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in text.splitlines()
            if line.startswith("| ")]


def cell(text: str, first_cols: tuple[str, ...], column: str) -> str:
    rows = md_rows(text)
    header = rows[0]
    for row in rows[1:]:
        if tuple(row[:len(first_cols)]) == first_cols:
            return row[header.index(column)]
    raise KeyError(first_cols)


# ------------------------------------------------------------------------------------------- outputs

def test_every_output_exists_and_rerender_is_byte_identical(rendered, tmp_path):
    out, paths = rendered
    for t in IDS:
        exts = [".png", ".pdf", ".csv"] * (t == "figure_drop") + [".md", ".csv", ".tex"]
        assert [p.suffix for p in paths[t]] == exts, t
        assert all(p.is_file() and p.stat().st_size > 0 for p in paths[t]), t
    again = _render_all(tmp_path)
    for t in IDS:
        for a, b in zip(paths[t], again[t]):
            assert a.read_bytes() == b.read_bytes(), f"{t}: {a.name} differs on re-render"


# ---------------------------------------------------------------------------------- Tables 4/5/10/11

def test_table4_mean_std_over_seeds_by_hand(rendered):
    text = md(rendered, "table4")
    # GEC (ROUGE-L), wo_exam, original: seeds 10 and 20 -> mean 15, population std 5; paper 83.1 ± 1.4
    wo_original = ("INSTRU-WO-EXAM", "none", "original instruction")
    assert cell(text, wo_original, "GEC (ROUGE-L)") == "15.0 ± 5.0 (83.1 ± 1.4)"
    # TE (EM), wo_exam, original: 40 and 50 -> 45 ± 5; paper 40.1 ± 0.8
    assert cell(text, ("INSTRU-WO-EXAM", "none", "original instruction"), "TE (EM)") == "45.0 ± 5.0 (40.1 ± 0.8)"
    # GEC, wo_exam, delete stopwords: 8 and 12 -> 10 ± 2
    assert cell(text, ("INSTRU-WO-EXAM", "word", "delete stopwords"), "GEC (ROUGE-L)") == "10.0 ± 2.0 (83.3 ± 0.6)"
    # GEC, w_exam, delete stopwords: one seed (33) -> no std
    assert cell(text, ("INSTRU-W-EXAM", "word", "delete stopwords"), "GEC (ROUGE-L)") == "33.0 (85.2 ± 0.5)"
    df = tidy(rendered, "table4")
    row = df[(df.source == "ours") & (df.setting == "wo_exam") & (df.condition == "original") & (df.category == "GEC")]
    assert row[["mean", "std", "n_seeds", "n_instances"]].values.tolist() == [[15.0, 5.0, 2, 4]]
    one = df[(df.source == "ours") & (df.setting == "w_exam") & (df.condition == "delete_stopwords")
             & (df.category == "GEC")]
    assert one["n_seeds"].tolist() == [1] and math.isnan(one["std"].iloc[0])
    assert "population std (ddof=0)" in text and "n=2 seed(s) (1, 2)" in text


def test_table4_paper_numbers_beside_ours(rendered):
    text = md(rendered, "table4")
    paper = pd.read_csv(PAPER / "table4.csv", dtype=str, keep_default_na=False)
    df = tidy(rendered, "table4")
    got = df[df.source == "paper"]
    assert len(got) == len(paper) == 216
    for r in paper.itertuples(index=False):
        printed = f"({r.mean} ± {r.std})" if r.std else f"({r.mean})"
        setting = PAPER_SETTINGS[r.setting]
        cond = next(c for c in PAPER_CONDITIONS if c.key == r.condition)
        metric = "EM" if r.metric == "EM" else "ROUGE-L"
        assert cell(text, (r.setting, cond.paper_level, cond.label), f"{r.category} ({metric})").endswith(printed)
        m = got[(got.setting == setting) & (got.condition == r.condition) & (got.category == r.category)]
        assert m["mean"].tolist() == [pytest.approx(float(r.mean))]
    # a condition we did not run keeps the paper's number, ours is "–"
    assert cell(text, ("INSTRU-WO-EXAM", "word", "delete [5,10] words"), "AC (EM)") == "– (45.3 ± 3.3)"
    assert "condition not run in INSTRU-WO-EXAM: delete_words" in text
    assert "Paper = T5-3B, English (119 tasks)" in text and "main fixture model" in text
    assert "Deviation: a synthetic deviation" in text and "Scale: fixture." in text


def test_missing_category_renders_dash_with_note(rendered):
    t4, t10 = md(rendered, "table4"), md(rendered, "table10")
    # AC has no usable English task (selection.json says why): every AC cell is "–", the paper's number stays
    assert cell(t4, ("INSTRU-WO-EXAM", "none", "original instruction"), "AC (EM)") == "– (49.8 ± 0.6)"
    assert "category without usable data in the mirror: AC (no task with a definition and >= 4 instances" in t4
    # non-English AC (task396 absent from the mirror)
    assert cell(t10, ("INSTRU-WO-EXAM", "none", "original instruction"), "AC (EM)") == "– (76.3 ± 3.4)"
    assert "AC (task396 is absent from the mirror)" in t10
    # a category no run of ours has (and the selection does not explain) is named too
    assert "no task of the category in our runs: CR, DAR, WA" in t4
    # table 10: one seed -> no std; columns = the paper's 4 categories
    assert cell(t10, ("INSTRU-W-EXAM", "none", "original instruction"), "TG (ROUGE-L)") == "18.0 (8.80 ± 0.7)"
    assert md_rows(t10)[0][3:] == ["AC (EM)", "CEC (EM)", "TE (EM)", "TG (ROUGE-L)"]


def test_second_model_tables_and_no_second_model(rendered, tmp_path):
    t5, t11 = md(rendered, "table5"), md(rendered, "table11")
    assert md_rows(t5)[1][0] == "INSTRU-W-EXAM" and len(md_rows(t5)) == 1 + 9  # w_exam only
    assert cell(t5, ("INSTRU-W-EXAM", "none", "original instruction"), "GEC (ROUGE-L)") == "50.0 (87.80)"
    assert "second fixture model" in t5
    # table 11: the second model has no non-English runs -> all ours "–", the paper's numbers all there
    assert cell(t11, ("INSTRU-W-EXAM", "none", "original instruction"), "AC (EM)") == "– (86.00)"
    assert "condition not run in INSTRU-W-EXAM: original" in t11
    # no second model configured at all: the table still renders, says why
    ctx = dict(CONTEXT, models={"fixture-main": "main"})
    _render("table5", tmp_path, {"scores": [], "paper_table5": str(PAPER / "table5.csv")}, ctx)
    text = (tmp_path / "tables" / "table5.md").read_text()
    assert "no model is configured for this table" in text
    assert cell(text, ("INSTRU-W-EXAM", "none", "original instruction"), "QR (ROUGE-L)") == "– (66.25)"


def test_each_condition_table_footnotes_the_deviations_of_its_own_model(tmp_path):
    # Tables 5 and 11 are the second model's: the main model's finetune deviation is not theirs, and back
    ctx = dict(CONTEXT, model_deviations={"fixture-main": ["main: LoRA-finetuned"],
                                          "fixture-second": ["second: used as shipped"]})
    for table_id, own, other in (("table4", "fixture-main", "fixture-second"), ("table10", "fixture-main",
                                 "fixture-second"), ("table5", "fixture-second", "fixture-main"),
                                 ("table11", "fixture-second", "fixture-main")):
        _render(table_id, tmp_path, None, ctx)
        text = (tmp_path / "tables" / f"{table_id}.md").read_text()
        assert f"Deviation ({own}): {own[8:]}: " in text and f"Deviation ({other})" not in text, table_id
        assert "Deviation: a synthetic deviation" in text  # the study-wide ones stay under every table


# -------------------------------------------------------------------------------------- Tables 7-9

def test_table7_rephrased_is_mean_std_over_three_paraphrases(rendered):
    text = md(rendered, "table7")
    # GEC: paraphrases 20, 30, 40 -> mean 30, population std sqrt((100 + 0 + 100) / 3) = 8.165
    assert cell(text, ("GEC",), "Ours rephrased") == "30.0 ± 8.2"
    assert cell(text, ("GEC",), "Ours original") == "30.0"
    # TE: 40, 50, 60 -> 50 ± 8.2; original 50
    assert cell(text, ("TE",), "Ours rephrased") == "50.0 ± 8.2"
    # both paper models beside ours
    assert cell(text, ("GEC",), "Paper T5-3B rephrased") == "84.3 ± 0.3"
    assert cell(text, ("GEC",), "Paper T5-11B rephrased") == "85.4 ± 0.2"
    assert cell(text, ("GEC",), "Paper T5-11B original") == "85.0"
    assert cell(text, ("AC",), "Ours original") == "–"
    df = tidy(rendered, "table7")
    reph = df[(df.source == "ours") & (df.instruction == "rephrased") & (df.category == "GEC")]
    assert reph["mean"].tolist() == [30.0]
    assert reph["std"].iloc[0] == pytest.approx(math.sqrt(200 / 3), abs=1e-4)
    assert reph["n_paraphrases"].tolist() == [3]
    assert sorted(df[(df.source == "ours") & (df.category == "GEC")]["instruction"]) == [
        "original", "paraphrase_1", "paraphrase_2", "paraphrase_3", "rephrased"]
    assert "task_fixture_missing (no instances in the data)" in text


def test_table8_mean_std_over_prompts(rendered):
    text = md(rendered, "table8")
    # sum (EM): prompt 1 seeds 10, 20 -> 15; prompt 2 seeds 30, 30 -> 30; over prompts 22.5 ± 7.5
    assert cell(text, ("sum",), "Ours") == "22.5 ± 7.5"
    assert cell(text, ("sum",), "Prompts") == "2"
    # negation (ROUGE-L, as the paper's Table 8): 60, 70, 80 -> 70 ± 8.2
    assert cell(text, ("negation",), "Metric") == "ROUGE-L"
    assert cell(text, ("negation",), "Ours") == "70.0 ± 8.2"
    assert cell(text, ("negation",), "Paper T5-3B") == "70.7 ± 11.6"
    assert cell(text, ("negation",), "Paper T5-11B") == "71.6 ± 6.1"
    assert cell(text, ("orthography",), "Ours") == "–"
    assert "task not run: synonyms" in text
    assert len(md_rows(text)) == 1 + 24


def test_table9_joins_prompts_on_normalised_text(rendered):
    text = md(rendered, "table9")
    rows = {(r[0], r[2]): r for r in md_rows(text)[1:]}
    assert rows[("negation", "write the negation")][3:5] == ["60.00", "75.87"]
    # our prompt has a run of spaces; it still matches the paper's "Negate the given sentence"
    assert rows[("negation", "Negate   the given sentence")][3:5] == ["70.00", "75.39"]
    assert rows[("negation", "A synthetic prompt that is not in the paper.")][3:5] == ["80.00", "–"]
    # paper prompts we do not have are listed with ours "–"
    assert rows[("negation", "Negate the following sentence:")][3:5] == ["–", "68.92"]
    assert rows[("active to passive", "turn the sentence from active tense to passive tense.")][3:5] == ["–", "97.80"]
    assert "2 of 34 paper prompts matched" in text


def test_table9_join_ignores_case_and_punctuation(tmp_path):
    # our data's wording of two cause-and-effect prompts: a capital "The" and no final full stop
    key = "cause_and_effect"
    texts = {1: "Each input consists of two sentences, where one is the cause and the other is the outcome. "
                "Write The cause sentence",
             2: "The input consists of two sentences. One is the cause of the other. Write the cause sentence",
             3: "The input is a cause and effect, write the cause"}
    score = {"model": "fixture-main", "taskset": "diverse", "condition": "diverse_prompt", "setting": "wo_exam",
             "seed": 1, "by_prompt": {f"{key}::{i}": {"rougeL": 10.0 * i, "n": 1} for i in texts},
             "prompts": {f"{key}::{i}": t for i, t in texts.items()}}
    _render("table9", tmp_path, {"scores": [score], "paper_table9": str(PAPER / "table9.csv")})
    text = (tmp_path / "tables" / "table9.md").read_text()
    rows = [r for r in md_rows(text)[1:] if r[0] == "cause and effect"]
    assert len(rows) == 9  # the paper's 9 prompts, ours matched onto 3 of them: no extra rows
    by_ours = {r[1]: r for r in rows if r[1] != "–"}
    assert by_ours["1"][3] == "10.00" and by_ours["1"][4] != "–"
    assert by_ours["2"][3] == "20.00" and by_ours["2"][4] != "–"
    assert "3 of 34 paper prompts matched" in text


def test_match_prompts_same_text_first_then_normalised_each_paper_prompt_once():
    dot, comma = "The input is a cause and effect. Write the cause.", "The input is a cause and effect, write the cause"
    assert match_prompts([("a", comma), ("b", dot)], [dot, comma]) == {"a": 1, "b": 0}  # exact text wins
    assert match_prompts([("a", "x  Y."), ("b", "X y"), ("c", "x y z")], ["x y", "X Y!"]) == {"a": 0, "b": 1}
    assert match_prompts([("a", None), ("b", "Negate the given sentence")], ["negate the given sentence."]) == {"b": 0}


# ---------------------------------------------------------------------------------- Tables 1/2/3/6

def test_table1_task_sample(rendered):
    text = md(rendered, "table1")
    assert cell(text, ("Definition", "text"), "Matches paper") == "yes"
    assert cell(text, ("Positive example", "input"), "Matches paper") == "no"  # ' vs ’
    assert "only in quote characters" in text
    assert cell(text, ("Negative example", "explanation"), "Matches paper") == "yes"
    # the instance whose input is the paper's (2nd in our file), and its matching reference
    assert cell(text, ("Instance", "input"), "Matches paper") == "yes"
    assert cell(text, ("Instance", "output"), "Matches paper") == "yes"
    assert "task1557-fixture-2 (position 2 of 2" in text
    assert "task1557_jfleg_answer_generation" in text


def test_table2_categories_and_counts(rendered):
    text = md(rendered, "table2")
    assert len(md_rows(text)) == 1 + 12
    assert cell(text, ("GEC",), "Metric (ours)") == "ROUGE-L" and cell(text, ("TE",), "Metric (paper)") == "Exact Match"
    assert all(r[5] == "yes" for r in md_rows(text)[1:])
    assert cell(text, ("AC",), "English test tasks (with data / all)") == "0 / 1"
    assert cell(text, ("GEC",), "English tasks in our run") == "1"
    # the prepared data writes Data to Text as "DT"; the paper's Table 2 as "DTT"
    assert cell(text, ("DTT",), "English test tasks (with data / all)") == "1 / 1"


def test_category_alias_dt_is_dtt(tmp_path):
    base = json.loads((FIX / "scores/fixture-main/english/original/wo_exam/seed1.json").read_text())
    score = dict(base, by_category={"DT": {"exact_match": 1.0, "rougeL": 42.0, "n": 4}},
                 tasks={"task_fixture_dt": {"category_abbrev": "DT", "metric": "rougeL", "language": "English"}})
    _render("table4", tmp_path, {"scores": [score], "paper_table4": str(PAPER / "table4.csv")})
    text = (tmp_path / "tables" / "table4.md").read_text()
    assert cell(text, ("INSTRU-WO-EXAM", "none", "original instruction"), "DTT (ROUGE-L)") == "42.0 (31.6 ± 0.4)"
    assert not any(c.startswith("DT ") for c in md_rows(text)[0])


def test_table3_perturbations(rendered):
    text = md(rendered, "table3")
    assert cell(text, ("none", "original instruction"), "Same text as paper") == "yes"
    # the paper's <del>…</del> spans removed = our delete_stopwords text
    assert cell(text, ("word", "delete stopwords"), "Same text as paper") == "yes"
    assert cell(text, ("word", "insert words"), "Ours (our code)") == "–"
    assert "insert_words missing from the perturbation examples file" in text
    assert paper_result_text("a <del>b</del> c <u>d.</u>") == "a c d."


def test_table6_para_example(rendered):
    text = md(rendered, "table6")
    assert cell(text, ("Original Instruction",), "Matches paper") == "yes"
    assert cell(text, ("New Instruction 1",), "Equal to paper's") == "New Instruction 2"
    assert "numbered differently" in text


# -------------------------------------------------------------------------------------------- figure

def test_figure_drop(rendered):
    out, paths = rendered
    assert [p.suffix for p in paths["figure_drop"]] == [".png", ".pdf", ".csv", ".md", ".csv", ".tex"]
    assert (out / "figures" / "figure_drop.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "figures" / "figure_drop.pdf").read_bytes()[:5] == b"%PDF-"
    df = tidy(rendered, "figure_drop")
    ours = df[df.source == "ours"].set_index(["setting", "condition", "category"])["drop"]
    assert ours[("wo_exam", "delete_stopwords", "GEC")] == pytest.approx(5.0)   # 15 - 10
    assert ours[("w_exam", "delete_stopwords", "GEC")] == pytest.approx(2.0)    # 35 - 33
    assert math.isnan(ours[("wo_exam", "shuffle_words", "GEC")])                 # not run
    paper = df[df.source == "paper"].set_index(["setting", "condition", "category"])["drop"]
    assert paper[("wo_exam", "delete_stopwords", "AC")] == pytest.approx(49.8 - 44.2)


# ------------------------------------------------------------------------------------ dispatch/errors

def test_figure_drop_table_of_numbers(rendered):
    text = md(rendered, "figure_drop")
    # GEC, INSTRU-WO-EXAM, delete stopwords: ours 15 - 10 = 5.0; paper 83.1 - 83.3 = -0.2
    assert cell(text, ("INSTRU-WO-EXAM", "word", "delete stopwords"), "GEC") == "5.0 (-0.2)"
    # a condition we did not run: ours "–", the paper's drop stays (AC: 49.8 - 44.2)
    assert cell(text, ("INSTRU-WO-EXAM", "word", "shuffle words"), "GEC").startswith("– (")
    assert cell(text, ("INSTRU-WO-EXAM", "word", "delete stopwords"), "AC") == "– (5.6)"
    assert len(md_rows(text)) == 1 + 2 * 8
    assert "main fixture model" in text and "Scale: fixture." in text
    # the table's CSV is the figure's tidy data
    assert (rendered[0] / "tables" / "figure_drop.csv").read_bytes() == \
        (rendered[0] / "figures" / "figure_drop.csv").read_bytes()


def _score(condition, setting, by_category, seed=1):
    return {"model": "fixture-main", "taskset": "english", "condition": condition, "setting": setting,
            "seed": seed, "by_category": by_category}


def test_figure_drop_greys_a_floor(tmp_path):
    # GEC (ROUGE-L) 0 -> 0: a floor, not a drop of 0; TE (EM) 0 -> 0 too; CR 40 -> 30: a real drop of 10
    scores = [_score("original", "wo_exam", {"GEC": {"rougeL": 0.0, "n": 2}, "TE": {"exact_match": 0.0, "n": 2},
                                             "CR": {"exact_match": 40.0, "n": 2}}),
              _score("delete_stopwords", "wo_exam", {"GEC": {"rougeL": 0.0, "n": 2}, "TE": {"exact_match": 0.0, "n": 2},
                                                     "CR": {"exact_match": 30.0, "n": 2}})]
    _render("figure_drop", tmp_path, {"scores": scores, "paper_table4": str(PAPER / "table4.csv")})
    df = pd.read_csv(tmp_path / "figures" / "figure_drop.csv")
    ours = df[(df.source == "ours") & (df.setting == "wo_exam") & (df.condition == "delete_stopwords")]
    floor = ours.set_index("category")["floor"]
    assert floor["GEC"] and floor["TE"] and not floor["CR"] and not floor["AC"]  # AC: no numbers, not a floor
    assert not df[df.source == "paper"]["floor"].any()
    text = (tmp_path / "tables" / "figure_drop.md").read_text()
    row = ("INSTRU-WO-EXAM", "word", "delete stopwords")
    assert cell(text, row, "GEC") == "floor (-0.2)" and cell(text, row, "CR").startswith("10.0 (")
    assert "floor = original and perturbed are both 0" in text


def test_build_returns_table_or_figure():
    for t in IDS:
        result = SPEC.output(t).builder()(_inputs(t), CONTEXT)
        assert isinstance(result, Figure if t.startswith("figure") else Table), t
        if isinstance(result, Figure):
            import matplotlib.pyplot as plt

            plt.close(result.figure)


def test_build_errors(tmp_path):
    with pytest.raises(KeyError, match="has no table or figure 'table12'"):
        SPEC.output("table12")
    with pytest.raises(KeyError, match="needs the named input 'paper_table4'"):
        _render("table4", tmp_path, {"scores": SCORES})
    dup = json.loads(Path(SCORES[0]).read_text())
    with pytest.raises(DataError, match="unique"):
        load_scores([dup, dict(dup)])
    with pytest.raises(DataError, match="'seed' is missing"):
        load_scores([{k: v for k, v in dup.items() if k != "seed"}])
    # a single score path (Snakemake passes one file as a string) is read like a list of one
    one = _render("table4", tmp_path, _inputs("table4", scores=SCORES[0]))
    assert one and (tmp_path / "tables" / "table4.md").is_file()


def test_fixture_is_marked_synthetic():
    assert "synthetic" in (FIX / "README.md").read_text().lower()
    assert all("synthetic fixture" in json.loads(Path(p).read_text())["model_label"] for p in SCORES)
