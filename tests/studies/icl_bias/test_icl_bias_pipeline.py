"""icl_bias workflow steps (requests -> predictions -> scores) with a fake backend, the config section's
schema and checks, and the study declaration."""

from __future__ import annotations

import math
from pathlib import Path

import jsonschema
import pytest

from wobble.backends.base import Generation
from wobble.config import fill_defaults, load_schema
from wobble.errors import ConfigError
from wobble.io import read_jsonl, write_jsonl
from wobble.studies.icl_bias.interventions import load_paper_texts
from wobble.studies.icl_bias.layout import check_section, run_pairs, split_config, split_datasets, split_params_from
from wobble.studies.icl_bias.pairs import PAIRS
from wobble.studies.icl_bias.pipeline import infer, pair_requests, scores
from wobble.studies.icl_bias.spec import SPEC
from wobble.studies.icl_bias.splits import SplitParams, build_split, label_cells

REPO = Path(__file__).resolve().parents[3]
PAIR = PAIRS["sa_sentiment_punctuation"]


def _split():
    pool = [{"id": f"r{h1}{h2}_{i}", "text": f"review {h1}{h2} {i}{'!' if h2 else '.'}", "h1": h1, "meta": {}}
            for (h1, h2), n in {(1, 1): 6, (0, 0): 6, (1, 0): 8, (0, 1): 8}.items() for i in range(n)]
    return build_split(PAIR, label_cells(PAIR, pool), SplitParams(shots=4, n_sets=2, n_test_per_cell=3,
                                                                  min_test_per_cell=2), "reviews")


ONE, ZERO = {"1", "other"}, {"0", "period"}  # label words of 1 / 0 in the conditions below


class FakeBackend:
    """Prefers the label word of the query's own h2 (its text ends with "!" for h2 = 1); explains with h1."""

    model_key = "fake"
    supports_first_token_logprobs = False

    def __init__(self):
        self.calls = []

    def next_token_logprobs(self, prompts, candidates):
        self.calls.append(("score", len(prompts), tuple(candidates)))
        out = []
        for p in prompts:
            preferred = ONE if p.rsplit("\n\n", 2)[-2].endswith("!") else ZERO
            out.append({c: math.log(0.7 if c in preferred else 0.3) for c in candidates})
        return out

    def generate(self, prompts, params):
        self.calls.append(("generate", len(prompts), params.stop))
        return [Generation(text="Therefore, the answer is " + p.rsplit("\n\n", 2)[-2].split()[1][0] + ".",
                           rendered_prompt=p) for p in prompts]


def test_pair_requests_infer_and_scores(tmp_path):
    split = _split()
    texts = load_paper_texts(REPO / "paper" / "icl_bias")
    bundle = pair_requests(split, texts, ["verbalizer", "explanation", "disambig"], ["h2"])  # h2: End punctuation?
    conds = {r["condition"] for r in bundle["requests"]}
    assert conds == {"baseline", "verbalizer-h2", "explanation-h2", "disambig-h2"}
    # label-word conditions: 2 sets x (3 content-free + 6 tests); explanation: 2 sets x 6 tests
    assert len(bundle["requests"]) == 3 * 2 * 9 + 2 * 6
    backend = FakeBackend()
    out = tmp_path / "pred.jsonl"
    n = infer(backend, bundle, out, max_new_tokens=8, seed=0, chunk_size=100)
    assert n == len(bundle["requests"])
    assert {c[0] for c in backend.calls} == {"score", "generate"} and ("generate", 12, ("\n\n",)) in backend.calls
    preds = read_jsonl(out)
    assert all("prefix_id" in p and p["model"] == "fake" for p in preds)
    assert [p["uid"] for p in preds] == [r["uid"] for r in bundle["requests"]]  # request order
    assert preds[0]["rendered_prompt"] == bundle["prefixes"][preds[0]["prefix_id"]] + preds[0]["query"]
    assert not list(tmp_path.glob("pred.jsonl.*"))  # the parts are merged and removed
    recs = scores(bundle, preds, split, calibrate=True)
    assert len(recs) == 4 * 2 * 6
    by = {}
    for r in recs:
        by.setdefault(r["condition"], []).append(r)
    # the fake model follows h2 on every label-word condition, and writes "answer is <h1>" when explaining
    assert all(r["pred"] == r["h2"] for r in by["baseline"] + by["verbalizer-h2"] + by["disambig-h2"])
    assert all(r["pred"] == r["h1"] for r in by["explanation-h2"])
    assert infer(FakeBackend(), bundle, out, max_new_tokens=8, seed=0) == n  # resumes: nothing left to ask


def test_unavailable_pair_has_no_requests():
    bundle = pair_requests({"pair": "comments_toxicity_gender", "available": False, "items": [], "prompt_sets": []},
                           {}, ["verbalizer"], ["h1"])
    assert bundle == {"pair": "comments_toxicity_gender", "available": False, "prefixes": {}, "requests": []}


def _section(**over):
    schema = load_schema(REPO / "schemas" / "config.schema.yaml")
    frag = {**schema["properties"]["icl_bias"], "$defs": schema["$defs"]}  # the fragment with the shared $defs
    section = {"models": ["m-base", "m-ni"], **over}
    fill_defaults(frag, section)
    return frag, section


def test_schema_defaults_and_unknown_values():
    frag, section = _section()
    jsonschema.validate(section, frag)
    assert section["splits"] == {"prefer": "authors", "shots": 16, "n_sets": 3, "n_test_per_cell": 600,
                                 "min_test_per_cell": 20, "max_words": None, "seed": 0}
    assert section["interventions"] == ["verbalizer", "instruction", "explanation", "disambig"]
    assert section["calibrate"] is True and run_pairs(section) == list(PAIRS)
    assert split_params_from(split_config(section)) == SplitParams()
    frag, bad = _section(interventions=["verbalizer", "flattery"])
    with pytest.raises(jsonschema.ValidationError, match="flattery"):
        jsonschema.validate(bad, frag)


def test_check_section_names_the_key_and_allowed_values():
    _, section = _section(pairs=["sa_sentiment_domain", "sa_sentiment_colour"])
    with pytest.raises(ConfigError, match=r"icl_bias.pairs\[1\].*unknown pair 'sa_sentiment_colour'; expected one of"):
        check_section(section)
    _, section = _section(paper_models={"other": "Davinci"})
    with pytest.raises(ConfigError, match="icl_bias.paper_models.other"):
        check_section(section)
    _, ok = _section(pairs=["sa_sentiment_domain"], paper_models={"m-base": "Davinci"})
    check_section(ok)


def test_split_datasets():
    assert split_datasets("sa_sentiment_domain", "authors") == ["imdb", "yelp"]
    assert split_datasets("boolq_answer_qword", "authors") == ["ambigprompt"]
    assert split_datasets("nli_entailment_genre_gov_fic", "authors") == ["mnli_genre"]
    assert split_datasets("comments_toxicity_gender", "authors") == []


def test_spec_declares_every_table_and_figure():
    assert SPEC.name == "icl_bias" and Path(REPO / SPEC.schema).is_file() and Path(REPO / SPEC.rules).is_file()
    assert [o.name for o in SPEC.outputs] == ["table1", "table2", "table3", "table4", "table5", "figure2", "figure3",
                                            "table_calibration"]
    _, section = _section(pairs=["sa_sentiment_domain", "boolq_answer_qword"],
                          paper_models={"m-base": "Davinci", "m-ni": "Text-Davinci-002"})
    config = {"scale": "test", "models": {"m-base": {"source": "tiny"}, "m-ni": {"source": "tiny"}}, "icl_bias": section}
    t1 = SPEC.output("table1").inputs(config)
    assert t1 == {"splits": ["results/icl_bias/splits/sa_sentiment_domain.json",
                             "results/icl_bias/splits/boolq_answer_qword.json"]}
    assert SPEC.output("table4").inputs(config)["summaries"] == ["results/icl_bias/scores/m-base/summary.csv"]
    assert SPEC.output("table2").inputs(config)["summaries"] == [
        "results/icl_bias/scores/m-base/summary.csv", "results/icl_bias/scores/m-ni/summary.csv"]
    assert SPEC.output("figure2").paper_inputs() == {"paper_table4": "paper/icl_bias/table4.csv",
                                                     "paper_table5": "paper/icl_bias/table5.csv"}
    assert SPEC.output("table_calibration").inputs(config)["scores"][:2] == [
        "results/icl_bias/scores/m-base/sa_sentiment_domain.jsonl", "results/icl_bias/scores/m-base/boolq_answer_qword.jsonl"]
    assert SPEC.findings.measure == "wobble.studies.icl_bias.claims_report:findings"
    ctx = SPEC.context(config)
    assert ctx["pairs"] == ["sa_sentiment_domain", "boolq_answer_qword"] and ctx["shots"] == 16
    assert ctx["model_labels"]["m-base"].startswith("m-base")


def test_infer_resumes_a_finished_part(tmp_path):
    split = _split()
    bundle = pair_requests(split, load_paper_texts(REPO / "paper" / "icl_bias"), ["explanation"], ["h1"])
    out = tmp_path / "pred.jsonl"
    infer(FakeBackend(), bundle, out, max_new_tokens=4, seed=0)
    labels = [p for p in read_jsonl(out) if not p["generate"]]
    write_jsonl(tmp_path / "pred.jsonl.labels.jsonl", labels)  # as a killed job leaves it
    backend = FakeBackend()
    assert infer(backend, bundle, out, max_new_tokens=4, seed=0) == len(bundle["requests"])
    assert {c[0] for c in backend.calls} == {"generate"}  # the label words were not asked again
