"""icl_bias tables and figures built from hand-made score records beside the paper's CSVs."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from wobble.report.spec import Figure, Table
from wobble.studies.icl_bias.figures import build_figure2, build_figure3
from wobble.studies.icl_bias.pairs import PAIRS
from wobble.studies.icl_bias.summary import summarize
from wobble.studies.icl_bias.tables import build_table1, build_table2, build_table3, build_table4, build_table5

PAPER = Path(__file__).resolve().parents[3] / "paper" / "icl_bias"
RUN = ["nli_entailment_genre_gov_fic", "nli_entailment_genre_gov_tele", "nli_entailment_length",
       "sa_sentiment_domain", "comments_toxicity_religion_muslim_jewish"]
CONDS = [("baseline", None), ("verbalizer", "h1"), ("verbalizer", "h2")]


def _records(answer_h1: dict[str, bool]) -> list[dict]:
    """Two items per pair ((1,0) and (0,1)), two prompt sets. Baseline answers h1 where ``answer_h1[pair]``
    else h2; verbalizer-h1 always h1; verbalizer-h2 always h2."""
    out = []
    for pair in RUN:
        for s in (0, 1):
            for uid, h1 in ((f"{pair}:a", 1), (f"{pair}:b", 0)):
                for iv, target in CONDS:
                    follow = {"baseline": "h1" if answer_h1[pair] else "h2"}.get(iv, target)
                    pred = h1 if follow == "h1" else 1 - h1
                    out.append({"pair": pair, "condition": iv if target is None else f"{iv}-{target}",
                                "intervention": iv, "target": target, "set": s, "uid": uid, "h1": h1, "h2": 1 - h1,
                                "pred": pred})
    return out


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("iclb")
    summaries = []
    for model, follow in (("base", {p: p.startswith("nli") for p in RUN}), ("tuned", {p: True for p in RUN})):
        rows = summarize(_records(follow), n_boot=50, seed=0)
        path = d / f"{model}.csv"
        pd.DataFrame([{"model": model, **r} for r in rows]).to_csv(path, index=False)
        summaries.append(str(path))
    splits = []
    for key in PAIRS:
        if key in RUN:
            meta = {"pair": key, "available": True, "reason": "", "source": "authors" if PAIRS[key].released else "pool",
                    "counts": {"test_1_0": 1, "test_0_1": 1}}
        elif key.startswith("comments_toxicity_gender") or "race" in key or "christian" in key:
            meta = {"pair": key, "available": False, "reason": "no identity annotations", "source": "none",
                    "counts": {}}
        else:
            continue  # not in this run
        path = d / f"{key}.json"
        path.write_text(json.dumps(meta))
        splits.append(str(path))
    out = {"summaries": summaries, "splits": splits}
    out.update({f"paper_{stem}": str(PAPER / f"{stem}.csv") for stem in ("table1", "table2", "table3", "table4", "table5")})
    return out


CONTEXT = {"models": ["base", "tuned"], "model_labels": {"base": "Base", "tuned": "Tuned"},
           "paper_models": {"base": "Davinci", "tuned": "Text-Davinci-002"}, "shots": 4, "n_sets": 2,
           "n_test_per_cell": 1, "calibrate": True, "scale": "test"}


def test_table1_lists_every_pair_with_its_status(inputs):
    t = build_table1(inputs, CONTEXT)
    assert isinstance(t, Table) and len(t.display) == 23
    status = dict(zip(t.tidy["pair"], t.tidy["status"]))
    assert status["comments_toxicity_gender"] == "unavailable here: no identity annotations"
    assert status["sa_sentiment_punctuation"] == "not in this run (icl_bias.pairs)"
    assert status["comments_toxicity_religion_muslim_jewish"].startswith("the authors' split; 2 test items")
    assert set(t.tidy["pair"].dropna()) == set(PAIRS)


def test_table2_averages_over_the_run_pairs(inputs):
    t = build_table2(inputs, CONTEXT)
    tidy = t.tidy.set_index(["steer_towards", "intervention", "model"])
    # base: baseline follows h1 on the 3 NLI pairs, h2 on the other 2 -> h1 baseline 60 %, h2 40 %
    assert tidy.loc[("h1", "Baseline", "base"), "value"] == pytest.approx(60.0)
    assert tidy.loc[("h2", "Baseline", "base"), "value"] == pytest.approx(40.0)
    assert tidy.loc[("h1", "Verbalizer", "base"), "value"] == pytest.approx(40.0)  # 100 - 60
    assert tidy.loc[("h2", "Verbalizer", "tuned"), "value"] == pytest.approx(100.0)
    assert tidy.loc[("h1", "Baseline", "base"), "paper"] == "39.5"
    row = t.display.set_index("Intervention").loc["Verbalizer"]
    assert row["h1: base (ours)"].startswith("+40.0") and row["h1: Davinci (paper)"] == "+11.9"
    assert any("comments_toxicity_gender, " in n and "unavailable here" in n for n in t.notes)


def test_table3_mnli_features(inputs):
    t = build_table3(inputs, CONTEXT)
    tidy = t.tidy.set_index(["model", "feature", "intervention"])
    assert tidy.loc[("base", "Govt/Fiction", "Baseline"), "value"] == pytest.approx(0.0)  # base follows h1 on NLI
    assert tidy.loc[("base", "Govt/Fiction", "Verbalizer"), "value"] == pytest.approx(100.0)
    assert tidy.loc[("base", "Govt/Fiction", "Baseline"), "paper"] == "87.9"
    assert pd.isna(tidy.loc[("base", "Negation", "Baseline"), "value"])  # not in this run
    assert any(n.startswith("Negation: nli_entailment_negation: not in this run") for n in t.notes)
    assert t.display.iloc[0]["Negation (ours)"] == "not in this run"


def test_tables_4_5_rows_and_cells(inputs):
    t4, t5 = build_table4(inputs, CONTEXT), build_table5(inputs, CONTEXT)
    d = t4.display.set_index(["Steer towards", "Dataset", "Feature"])
    assert d.loc[("h1", "NLI", "genre"), "Baseline (ours)"] == "100.0 / 0.0"
    assert d.loc[("h1", "NLI", "genre"), "Baseline (paper)"] == "11.5 / 88.5"
    assert d.loc[("h2", "SA", "domain"), "Verbalizers (ours)"] == "0.0 / 100.0"
    assert d.loc[("h1", "TC", "gender"), "Baseline (ours)"] == "unavailable here"
    assert d.loc[("h1", "QA", "overlap"), "Baseline (ours)"] == "not in this run"
    assert ("h1", "SA", "domain") in d.index  # our SA rows towards h1, which the paper lacks
    assert d.loc[("h1", "SA", "domain"), "Baseline (paper)"] == "–"
    assert d.loc[("h2", "NLI", "Aggregate"), "Baseline (ours)"] == "100.0 / 0.0"
    assert t5.tidy["model"].dropna().unique().tolist() == ["tuned"]
    assert any(n.startswith("TC/gender: comments_toxicity_gender, comments_toxicity_gender_lgbtq: unavailable here")
               for n in t4.notes)


def test_figures(inputs):
    f2, f3 = build_figure2(inputs, CONTEXT), build_figure3(inputs, CONTEXT)
    assert isinstance(f2, Figure) and isinstance(f3, Figure) and f2.table is not None
    got = f2.data.set_index(["model", "pair", "measure"])
    assert got.loc[("tuned", "sa_sentiment_domain", "h1"), "value"] == pytest.approx(100.0)
    f3d = f3.data.set_index(["model", "steer_towards", "dataset", "intervention"])
    assert f3d.loc[("base", "h2", "NLI", "Verbalizers"), "value"] == pytest.approx(100.0)
    assert f3d.loc[("tuned", "h1", "QA", "Baseline"), "paper"] == "73.4"  # Table 5 QA aggregate, towards h1
    assert f3d.loc[("base", "h2", "QA", "Baseline"), "paper"] == "61.8"  # Table 4: the h2 of "38.2 / 61.8"
