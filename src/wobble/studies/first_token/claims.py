"""The first_token study's headline claims (Wang et al. 2024, Abstract, §3, §4.1-4.3, Appendix A.1) and how each
is measured, one row per model (each claim is about a model's behaviour).

Input: the labelled predictions of every model at every temperature (one record per prompt with ``model``,
``constraint``, ``question_uid``, ``shuffle``, ``first_token_letter``, ``first_token_option``, ``text_letter``,
``text_option`` — the option text, "Refused", or None when the text names no single option —, ``response``,
``gen_params``). The unit resampled is the QUESTION (a question brings all its shuffles, levels and
temperatures); where the bootstrap has no spread at a share of 0 or 1, the interval is exact binomial.

Pre-registered, before any run (with the verdict rule of :mod:`wobble.report.claims`):

* **levels**: the paper's four, Low, Medium, High, Example, at the main temperature (``example_abc`` is
  Figure 3's control); a **mismatch** is a prompt whose text option differs from the first-token option, a text
  naming no option included (the paper's ``total_mis``, our Figure 2a);
* **precondition of the mismatch claims** (in each row): text and first token can disagree — in at least one
  of the cells the claim names, at least 5 % of the model's text answers do not open with the first-token
  letter. A model that opens every answer with the letter gives the same answer both ways by construction, so
  a mismatch claim does not apply to it. The 5 % is fixed from the paper's most format-following model,
  Mistral-7b-Instruct-v0.1, whose released answers miss the letter in 13 % (Low) and 16 % (Example) of prompts;
* **wobble's position-bias control** (not the paper's; reported beside every main-temperature row): the share
  of the most frequent first-token letter, and in how many question x level groups of shuffles the first token
  keeps its letter rather than its option; the Example-C row does not apply to a model whose first token sits on
  the same letter in >= 95 % of both High and Example prompts (it answers the position, not the template);
* ``mismatch_over_60_percent``: the model's largest per-level mismatch rate > 0.60 (the paper's 66.2 % is one
  such cell, Llama2-7b-Chat; the paper's effect is the largest cell it states, paper/first_token/figure2.csv);
* ``mismatch_persists_when_constrained``: the smaller of the High and Example mismatch rates (the two
  constraining instructions the Abstract names) > 0.05, a non-negligible share (in the paper's released
  numbers five of six models pass; Mistral-7b-v0.1, 0.4 % at High, is the paper's own exception);
* ``mismatch_decreases_low_to_high``: min(Low − Medium, Medium − High) > 0 — each stronger constraint lowers
  the mismatch (the paper's exception, Mistral-7b-v0.2, rises from Medium to High); needs Low able to disagree;
* ``example_more_mismatch_than_high``: Example − High mismatch > 0; needs Example able to disagree;
* ``refusal_major_reason_for_mismatch``: refusal's share of the mismatches (text refuses, first token does not:
  Figure 2a's light bars over the whole bar) > 0.25 — "one of the major reasons" read as behind at least a
  quarter of the mismatches (a reason behind fewer than one in four is a minor one);
* ``example_pulls_first_token_to_C``: share of first-token 'C' under Example minus under High > 0 (paper:
  85 % − 32.1 %, Llama2-70b-Chat, paper/first_token/figure3.csv and figure7.csv);
* ``example_text_more_evenly_distributed``: under Example, entropy (nats) of the text answers' letters minus
  that of the first-token letters > 0 (texts naming no option left out; degenerate below half mapped);
* ``text_more_consistent``: mean over question x level cells of first-token minus text answer entropy over the
  shuffles > 0 (nats; Table 3's quantity, the paper's effect the mean over its cells);
* ``temperature_lowers_mismatch`` / ``_refusal``: highest minus lowest temperature on the sweep's levels < 0;
  preconditions: room to fall (at the lowest temperature the text can disagree, resp. refuses in >= 5 %);
  ``temperature_worsens_consistency``: text answer entropy, highest minus lowest temperature > 0.
"""

from __future__ import annotations

from typing import Any, Mapping

from wobble.report.claims import Claim

STUDY = "first_token"
_CAN = ("text and first token can disagree: at least 5% of the model's text answers do not open with the "
        "first-token letter in {}")
_PCT = "share of prompts"
_A1 = ("As the temperature increases, the model prioritizes the answer diversity, which leads to a worse "
       "consistency level, but a lower mismatch and refusal rate")


def _claim(cid: str, quote: str, section: str, paper_value: str, effect: str, **kw) -> Claim:
    return Claim(STUDY, cid, quote, section, paper_value, effect, unit_name="questions", per_model=True, **kw)


CLAIMS: tuple[Claim, ...] = (
    _claim("mismatch_over_60_percent",
           "the two approaches are severely misaligned on all dimensions, reaching mismatch rates over 60%",
           "Abstract, §1, §4.1 Figure 2a", "66.2% (Llama2-7b-Chat)",
           "the model's largest per-level mismatch rate (four levels; a text naming no option counts); "
           "'contradicted': this model stays below 60%, as most of the paper's six do",
           null=0.6, unit=_PCT, precondition=_CAN.format("one of the four levels")),
    _claim("mismatch_persists_when_constrained",
           "Crucially, models remain misaligned even when we increasingly constrain prompts, i.e., force them to "
           "start with an option letter or example template", "Abstract, §4.1 Figure 2a",
           "Figure 2a (bars; no number at High or Example in the text)",
           "the smaller of the High and Example mismatch rates, above a non-negligible 5%", null=0.05, unit=_PCT,
           evidence="figure", precondition=_CAN.format("one of the four levels (misaligned somewhere)")),
    _claim("mismatch_decreases_low_to_high",
           "The mismatch rate decreases as we increase the constraint level from Low to High for all models except "
           "Mistral-7b-Instruct-v0.2", "§4.1 Figure 2a", "Figure 2a (bars, no numbers)",
           "min(Low − Medium, Medium − High) mismatch: each stronger constraint lowers it (the paper's exception "
           "rises from Medium to High)", unit=_PCT, evidence="figure", precondition=_CAN.format("Low (room to fall)")),
    _claim("example_more_mismatch_than_high",
           "the Example Template leads to a higher mismatch rate than High Constraint instruction in five models "
           "out of six", "§4.1 Figure 2a", "Figure 2a (bars, no numbers)", "mismatch rate: Example − High",
           unit=_PCT, evidence="figure", precondition=_CAN.format("Example")),
    _claim("refusal_major_reason_for_mismatch",
           "The refusal answer turns out to be one of the major reasons for the mismatch between the first token "
           "and text output evaluation", "§3, §4.1 Figure 2a (light bars)",
           "Figure 2a light bars (no numbers; §4.1: refusal contributes little for Llama2-70b)",
           "refusal's share of the mismatches (the text refuses, the first token does not), above a quarter — "
           "'one of the major reasons' fixed as behind at least 1 in 4 mismatches", null=0.25,
           unit="share of mismatches", evidence="figure", precondition=_CAN.format("one of the four levels")),
    _claim("example_pulls_first_token_to_C",
           "the first token evaluation selects 'C' about 85% of the time (compared to 32.1% with High constraint",
           "§4.1, Figures 3a and 7", "85% − 32.1% (Llama2-70b-Chat)", "share of first-token 'C': Example − High",
           unit=_PCT, precondition=("the first token responds to the prompt: not the same letter on >= 95% of both "
                                    "the High and the Example prompts (wobble's position-bias control)")),
    _claim("example_text_more_evenly_distributed",
           "whereas the classified text output is more evenly distributed", "§4.1, Figure 3a",
           "Figure 3a (bars, no numbers)",
           "under Example, letter entropy of the text answers − of the first-token answers (texts naming no "
           "option left out)", unit="nats", evidence="figure", precondition=_CAN.format("the Example prompts")),
    _claim("text_more_consistent",
           "The text output achieves better consistency than the first token evaluation for all the models except "
           "Mixtral 8x7b", "§4.3, Table 3", "Table 3",
           "answer entropy over the shuffles, first token − text, mean over question x level cells", unit="nats",
           precondition=_CAN.format("one of the four levels")),
    _claim("temperature_lowers_mismatch", _A1, "Appendix A.1, Figure 4b", "Figure 4b (no numbers)",
           "mismatch rate: highest − lowest temperature on the sweep's levels", direction=-1, unit=_PCT,
           evidence="figure", precondition=_CAN.format("the sweep's levels at the lowest temperature (room to fall)")),
    _claim("temperature_lowers_refusal", _A1, "Appendix A.1, Figure 4b", "Figure 4b (no numbers)",
           "text refusal rate: highest − lowest temperature on the sweep's levels", direction=-1, unit=_PCT,
           evidence="figure", precondition="the text refuses in at least 5% of the answers at the lowest "
                                           "temperature (room to fall)"),
    _claim("temperature_worsens_consistency", _A1, "Appendix A.1, Figure 4a", "Figure 4a (no numbers)",
           "text answer entropy over the shuffles: highest − lowest temperature on the sweep's levels",
           unit="nats", evidence="figure", precondition="the run has at least two temperatures"),
)


_REQUIRED = ("model", "constraint", "question_uid", "shuffle", "first_token_letter", "first_token_option",
             "text_option")


def read_labeled(paths) -> list[dict]:
    """The labelled predictions; a record missing a field the claims read is one clear error naming it."""
    from wobble.errors import DataError
    from wobble.io import read_jsonl

    records = []
    for path in ([paths] if isinstance(paths, str) else paths):
        for i, r in enumerate(read_jsonl(path), start=1):
            gone = [k for k in _REQUIRED if k not in r]
            if gone:
                raise DataError(path, r.get("uid", f"line {i}"), f"labelled prediction without {', '.join(gone)}")
            records.append(r)
    return records


def _paper_number(path: str, rows: list[dict], where: str, **match) -> float:
    from wobble.errors import DataError

    hits = [r for r in rows if all(r.get(k) == v for k, v in match.items())]
    if len(hits) != 1 or not hits[0].get("value_pct", "").strip():
        raise DataError(path, where, f"exactly one row with {match} and a value_pct, got {len(hits)}")
    return float(hits[0]["value_pct"]) / 100


def paper_effects(paths: Mapping[str, str]) -> tuple[dict[str, float], dict[str, str]]:
    """The paper's effect of every table-backed claim, computed from paper/first_token/*.csv by the claim's own
    statistic (``paths``: ``paper_figure2``, ``paper_figure3``, ``paper_figure7``, ``paper_table3``), and the
    text shown for it: the largest mismatch cell the paper states (Figure 2a's numbers in its text), the
    Example-minus-High share of first-token 'C' (Figures 3a and 7), the mean first-token minus text entropy over
    Table 3's cells."""
    from wobble.errors import DataError
    from wobble.report.cells import read_paper
    from wobble.studies.first_token.claims_counts import difference, largest_cell, share

    f2 = read_paper(paths["paper_figure2"]).to_dict("records")
    cells = {(r["model"], r["constraint"]): float(r["value_pct"]) / 100 for r in f2
             if r["panel"] == "a" and r["quantity"].startswith("mismatch rate") and r["qualifier"] == "="}
    if not cells:
        raise DataError(paths["paper_figure2"], "panel a", "mismatch rates stated with '='")
    top = largest_cell(cells)
    who = next(k[0] for k, v in cells.items() if v == top)
    example = _paper_number(paths["paper_figure3"], read_paper(paths["paper_figure3"]).to_dict("records"),
                            "panel a", panel="a", quantity="share of first-token answers = 'C'")
    high = _paper_number(paths["paper_figure7"], read_paper(paths["paper_figure7"]).to_dict("records"),
                         "panel c", panel="c", quantity="share of first-token answers = 'C'")
    t3 = read_paper(paths["paper_table3"]).to_dict("records")
    try:
        gaps = [float(r["entropy_first_token"]) - float(r["entropy_text_output"]) for r in t3
                if r["entropy_first_token"].strip() and r["entropy_text_output"].strip()]
    except (KeyError, ValueError) as e:
        raise DataError(paths["paper_table3"], "entropy columns", f"numbers in entropy_first_token and "
                        f"entropy_text_output ({e})") from None
    effects = {"mismatch_over_60_percent": top, "example_pulls_first_token_to_C": difference(example, high),
               "text_more_consistent": share(sum(gaps), len(gaps))}
    values = {"mismatch_over_60_percent": f"{top:.1%} ({who}: the largest of the {len(cells)} mismatch rates "
                                          "the paper's text states)",
              "example_pulls_first_token_to_C": f"{example:.0%} − {high:.1%} = {effects['example_pulls_first_token_to_C']:.3f}"
                                                " (Llama2-70b-Chat)",
              "text_more_consistent": f"{effects['text_more_consistent']:.2f} nats (mean over {len(gaps)} model x "
                                      "level cells of Table 3)"}
    return effects, values


def findings(inputs: Mapping[str, Any], config: Mapping[str, Any]):
    """The study's claims ledger (``StudySpec.findings.measure``)."""
    from wobble.models.describe import model_label
    from wobble.report.claims import Findings
    from wobble.studies.first_token.claims_measure import measure
    from wobble.studies.first_token.layout import all_temperatures, main_temperature
    from wobble.studies.first_token.table_parts import classifier_text

    cfg = config[STUDY]
    records = read_labeled(inputs["labeled"])
    boot = cfg["bootstrap"]
    main = main_temperature(cfg)
    models = "; ".join(model_label(config["models"], m) for m in cfg["models"])
    used = ", ".join(sorted({r["classifier"] for r in records if r.get("classifier")})) or cfg["classifier"]
    notes = (f"Ours: {models}; {cfg['n_questions'] or 414} questions x {cfg['n_shuffles']} shuffles; four levels at "
             f"the main temperature {float(main):.2f}, the temperature rows on {', '.join(cfg['sweep_constraints'])} "
             f"at {', '.join(f'{float(t):.2f}' for t in all_temperatures(cfg))}; text answers labelled by "
             f"{classifier_text(used)} (first_token.classifier: {cfg['classifier']}).",
             "Paper: six 7B-70B chat models (Llama2 7b/13b/70b-Chat, Mistral-7B-Instruct v0.1/v0.2, Mixtral).",
             "Position bias is wobble's control, not the paper's: the share of the most frequent first-token letter "
             "and whether, over a question's shuffles, the first token keeps its letter (position) or its option "
             "(content).")
    effects, values = paper_effects(inputs)
    return Findings('Claims ledger: first_token (Wang et al. 2024, "My Answer is C")', CLAIMS,
                    measure(records, main, n_boot=boot["n"], seed=boot["seed"]), values, notes, effects)
