"""The first_token study's headline claims (Wang et al. 2024, Abstract, §3, §4.1-4.3, Appendix A.1), declared for
the measurement engine (:mod:`wobble.report.engine`), which computes every interval, gate and verdict.

The unit is the QUESTION: the paper samples questions and shows each one ten times with its options shuffled, so
a question's shuffles, levels and temperatures are resampled together and an exact interval counts questions,
never prompts (0 of 16 questions: [0, 0.21], not the [0, 0.02] of 0 of 160 prompts). The cells are the paper's
four levels at the main temperature (Low, Medium, High, Example), the sweep's lowest and highest temperature for
the Appendix A.1 rows, and Example beside Figure 3b's "A/B/C" template for the last claim. Unit tables:
:mod:`.claims_counts`; statistics, gates, preconditions, diagnostics and the paper's effect: :mod:`.claims_measure`.

Gates, read in every cell a claim reads, with the same thresholds for every claim: at least half of the text
answers name an option (``degenerate``); wobble's position-bias control on the TEXT (``positional``): the share of
the cell's questions whose text keeps its letter rather than its option over the shuffles, failed only where its
one-sided 95 % lower bound over questions lies above one half; at most 10 % of the texts cut at
``max_new_tokens`` (``truncated``). The first token's own position bias is the paper's selection-bias finding
(§4.1, §4.3), so it gates no claim: the rows that read the first token's letters or consistency print it as a
diagnostic. Each claim declares which way a gate's or precondition's failure biases its statistic; a decided
interval that no failed check can explain stays decided (:mod:`wobble.report.rules`). Per claim:

* ``mismatch_over_60_percent`` (an existence claim, "reaching"): the largest of the four levels' mismatch rates
  above 0.60 in some model; unmapped and cut texts count as mismatches (Figure 2a), so those gates bias toward
  the claim, and a row stands only if it also passes with unmapped texts counted as agreement (a precondition
  biased toward the claim; the mismatch among texts naming an option is printed beside it); a text that always
  opens with the letter forces the mismatch down (against the claim).
* ``mismatch_persists_when_constrained``: the smaller of the High and Example mismatch rates above a
  non-negligible 0.05; checks as above.
* ``mismatch_decreases_low_to_high``: min(Low − Medium, Medium − High) above 0; "can disagree" on every arm,
  with an unknown bias: a floor on one arm alone can shrink one step and inflate the other.
* ``example_more_mismatch_than_high``: Example − High mismatch above 0; only Example must be able to disagree (a
  text pinned to the letter at High is the paper's mechanism, §4.1); a floor at Example pushes the difference
  down (against the claim).
* ``refusal_major_reason_for_mismatch``: of all the mismatches of the four levels, the share where the text
  refuses and the first token does not (Figure 2a's light bar over the whole bar: a ratio of sums, each question
  weighing by its mismatches), above 0.25 ("one of the major reasons": behind at least one mismatch in four);
  the cluster bootstrap over the questions with a mismatch gives its interval, none below 30 of them. It reads
  the mismatched prompts (``subset``), its gates and preconditions every prompt of all four levels. It needs a
  text that refuses in at least 5 % of the answers of some level (against the claim); unmapped and cut texts are
  mismatches that are no refusal (against the claim). The paper column prints the released upper bounds per
  paper model.
* ``example_pulls_first_token_to_C``: the paper's hypothesis that the Example template pulls the first token to
  its literal letter: share of first-token 'C', Example − High, above 0. It reads no text, so no text gate; a
  first token pinned to one letter cannot move (toward the null).
* ``example_text_more_evenly_distributed``: under Example, the entropy of the text's letter counts pooled over
  every prompt minus the first token's (Figure 3a), above 0; the cluster bootstrap over questions gives its
  interval, none below 30 questions; gates with an unknown bias.
* ``text_more_consistent``: the mean over questions of first-token minus text answer entropy over the shuffles
  (Table 3), above 0; gates with an unknown bias.
* ``temperature_lowers_mismatch`` / ``_refusal``: highest minus lowest temperature below 0. Room to fall at the
  lowest temperature (a floor cannot make a rate rise: toward the null), and the lowest temperature's rate above
  the level a uniformly sampling text would give (1 − 1/k for the mismatch, 1/k for the refusal, k the
  question's options: below it, sampling raises the rate toward it — against the claim). More unmapped texts at
  a higher temperature raise the mismatch (against the claim) and lower the refusal (toward the claim); a text
  sampling near uniformly (answer entropy at least 0.8·ln k, read at both temperatures) has an unknown bias.
  ``temperature_worsens_consistency``: text answer entropy, highest minus lowest temperature, above 0. A highest
  temperature above the paper's sweep is labelled extrapolation in the notes.
* ``example_abc_lowers_first_token_C`` (appended, Figure 3b): the paper's own control of the Example hypothesis,
  "for both first-token evaluation and the classified text output": the share of 'C', Example − Example A/B/C,
  of the first token and of the text (texts naming no option left out), the smaller of the two above 0 (each at
  97.5 %, Bonferroni). A first token or text pinned to one letter cannot move (toward the null); the text half
  is gated on texts naming an option and cut at the cap (unknown), not on the text's positional answering: a
  text keeping the template's letter is what the claim is about. "Not measured" where the run has no
  example_abc.

The paper's own verdict: where the paper releases per-model numbers (Figure 2a's means in the released
``mapping_result.json``, Table 3, Figures 3a and 7), the claim's statistic is taken per paper model and reduced
over the models the paper's text says it holds for (the least favourable; the most favourable for the existence
claim), :func:`.claims_measure.paper_effect`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from wobble.report.engine import ClaimSpec
from wobble.report.intervals import Difference, Extreme, Mean
from wobble.studies.first_token.claims_counts import CONTROL, HIGHEST, LOWEST
from wobble.studies.first_token.claims_measure import (above_uniform, can_disagree, gates, letter_gap_statistic,
                                                       near_uniform, not_pinned, refusal_statistic, refuses,
                                                       unmapped_as_agreement)

STUDY = "first_token"
#: The commit whose definitions these are (each claim's ledger section prints it; a re-render applies them).
FREEZE = "5e06572"
LEVELS = ("Low", "Medium", "High", "Example")
ABC = CONTROL["example_abc"]
#: The questions there are: the paper's 414 OpinionQA questions, of which a run samples its own.
POPULATION = 414
#: The paper does not print Figure 4's temperatures; 1.0 (sampling from the model's own distribution, the top of
#: the usual sweeps) is taken as its end, and a hotter highest temperature is labelled extrapolation in the notes.
PAPER_SWEEP_MAX = 1.0
_A1 = ("As the temperature increases, the model prioritizes the answer diversity, which leads to a worse "
       "consistency level, but a lower mismatch and refusal rate")
_RATES = gates("toward the claim", "unknown", "toward the claim")
_ANY_LEVEL = can_disagree(LEVELS, every=False, bias="against the claim")


def _claim(cid: str, name: str, quote: str, section: str, paper_value: str, statistic, **kw) -> ClaimSpec:
    return ClaimSpec(STUDY, cid, name, quote, section, paper_value, statistic, unit="question", min_units=10,
                     freeze=FREEZE, population=POPULATION, **{"observation": ("shuffle",), **kw})


def _largest(column: str) -> Extreme:
    return Extreme(tuple(Mean(column, c) for c in LEVELS), "max", "the largest of the four levels' mismatch rates "
                   "(a text naming no option counts), mean over questions")


def _constrained(column: str) -> Extreme:
    return Extreme((Mean(column, "High"), Mean(column, "Example")), "min", "the smaller of the High and Example "
                   "mismatch rates, above a non-negligible 5%")


def declare(members: int = 1, n_boot: int = 1000, seed: int = 0) -> tuple[ClaimSpec, ...]:
    """The claims. ``members``: the models of the run, whose Bonferroni level (1 − 0.05/members, the engine's
    for an existence claim's members) the existence claim's "unmapped as agreement" precondition reads at;
    ``n_boot``, ``seed``: that precondition's bootstrap (the run's)."""
    over = _claim("mismatch_over_60_percent", "mismatch over 60% (some model)",
                  "the two approaches are severely misaligned on all dimensions, reaching mismatch rates over 60%",
                  "Abstract, §1, §4.1 Figure 2a", "Figure 2a released means", _largest("mismatch"),
                  null=0.6, scope="exists", gates=_RATES, preconditions=(_ANY_LEVEL,))
    over = replace(over, preconditions=(*over.preconditions, unmapped_as_agreement(
        over, _largest("mismatch_agree"), level=1 - 0.05 / max(members, 1), n_boot=n_boot, seed=seed)))
    persists = _claim("mismatch_persists_when_constrained", "mismatch persists when constrained",
                      "Crucially, models remain misaligned even when we increasingly constrain prompts, i.e., force "
                      "them to start with an option letter or example template", "Abstract, §4.1 Figure 2a",
                      "Figure 2a released means", _constrained("mismatch"), null=0.05, gates=_RATES,
                      preconditions=(_ANY_LEVEL,))
    persists = replace(persists, preconditions=(*persists.preconditions, unmapped_as_agreement(
        persists, _constrained("mismatch_agree"), n_boot=n_boot, seed=seed)))
    return (
        over,
        persists,
        _claim("mismatch_decreases_low_to_high", "mismatch falls Low → High",
               "The mismatch rate decreases as we increase the constraint level from Low to High for all models "
               "except Mistral-7b-Instruct-v0.2", "§4.1 Figure 2a", "Figure 2a released means",
               Extreme((Difference("mismatch", "Low", "Medium"), Difference("mismatch", "Medium", "High")), "min",
                       "min(Low − Medium, Medium − High) mismatch: each stronger constraint lowers it"),
               gates=gates("unknown", "unknown", "unknown"),
               preconditions=(can_disagree(("Low", "Medium", "High"), every=True, bias="unknown"),)),
        _claim("example_more_mismatch_than_high", "Example above High",
               "the Example Template leads to a higher mismatch rate than High Constraint instruction in five "
               "models out of six", "§4.1 Figure 2a", "Figure 2a released means",
               Difference("mismatch", "Example", "High", "mismatch rate: Example − High"),
               gates=gates("unknown", "unknown", "unknown"),
               preconditions=(can_disagree(("Example",), every=True, bias="against the claim"),)),
        _claim("refusal_major_reason_for_mismatch", "refusal behind mismatches",
               "The refusal answer turns out to be one of the major reasons for the mismatch between the first "
               "token and text output evaluation", "§3, §4.1 Figure 2a (light bars)",
               "Figure 2a light bars (no numbers released)", refusal_statistic(), null=0.25, evidence="figure",
               subset="mismatch", gates=gates("against the claim", "unknown", "against the claim"),
               preconditions=(can_disagree(LEVELS, every=False, bias="unknown", column="cell_notopen"),
                              refuses(LEVELS, "against the claim", column="cell_refuses_text", name="refuses",
                                      every=False))),
        _claim("example_pulls_first_token_to_C", "Example template pulls the first token to its letter",
               "This is probably due to the fact that it follows the literal pattern in the example where the "
               "answer is given as 'C'",
               "§4.1, Figures 3a and 7", "85% − 32.1% (Llama2-70b-Chat)",
               Difference("ft_C", "Example", "High", "share of first-token 'C': Example − High"),
               gates=(), preconditions=(not_pinned(("High", "Example"), "toward the null"),)),
        _claim("example_text_more_evenly_distributed", "text more even under Example",
               "whereas the classified text output is more evenly distributed", "§4.1, Figure 3a",
               "Figure 3a (bars, no numbers)", letter_gap_statistic("Example"), scale="nats", evidence="figure",
               gates=gates("unknown", "unknown", "unknown"),
               preconditions=(can_disagree(("Example",), every=True, bias="toward the null"),)),
        _claim("text_more_consistent", "text more consistent",
               "The text output achieves better consistency than the first token evaluation for all the models "
               "except Mixtral 8x7b", "§4.3, Table 3", "Table 3",
               Mean("h_gap", description="answer entropy over a question's shuffles, first token − text, mean "
                    "over its levels, mean over questions"),
               scale="nats", gates=gates("unknown", "unknown", "unknown"),
               preconditions=(can_disagree(LEVELS, every=False, bias="toward the null"),)),
        _claim("temperature_lowers_mismatch", "temperature lowers mismatch", _A1, "Appendix A.1, Figure 4b",
               "Figure 4b (no numbers)",
               Difference("mismatch", HIGHEST, LOWEST, "mismatch rate: highest − lowest temperature (sweep "
                          "levels)"),
               direction=-1, evidence="figure", observation=("level", "shuffle"),
               gates=(*gates("against the claim", "unknown", "against the claim"), near_uniform("unknown")),
               preconditions=(can_disagree((LOWEST,), every=True, bias="toward the null", name="room to fall"),
                              above_uniform(LOWEST, "mismatch", "against the claim"))),
        _claim("temperature_lowers_refusal", "temperature lowers refusal", _A1, "Appendix A.1, Figure 4b",
               "Figure 4b (no numbers)",
               Difference("refuses_text", HIGHEST, LOWEST, "text refusal rate: highest − lowest temperature"),
               direction=-1, evidence="figure", observation=("level", "shuffle"),
               gates=(*gates("toward the claim", None, "toward the claim"), near_uniform("unknown")),
               preconditions=(refuses((LOWEST,), "toward the null"),
                              above_uniform(LOWEST, "refuses_text", "against the claim"))),
        _claim("temperature_worsens_consistency", "temperature worsens consistency", _A1,
               "Appendix A.1, Figure 4a", "Figure 4a (no numbers)",
               Difference("h_text", HIGHEST, LOWEST, "text answer entropy over a question's shuffles: highest − "
                          "lowest temperature"),
               scale="nats", evidence="figure", observation=("level", "shuffle"),
               gates=(*gates("unknown", "unknown", "unknown"), near_uniform("unknown"))),
        _claim("example_abc_lowers_first_token_C", "Example A/B/C moves first token and text off 'C'",
               "Compared to Figure 3(a), the distribution shifted from 'C' to 'A' and 'B' for both first-token "
               "evaluation and the classified text output", "§4.1, Figure 3b", "Figure 3b (bars, no numbers)",
               Extreme((Difference("ft_C", "Example", ABC), Difference("text_C", "Example", ABC)), "min",
                       "share of 'C', Example − Example A/B/C, the smaller of the first token's and the text's "
                       "(texts naming no option left out): both move off 'C'"),
               evidence="figure", gates=gates("unknown", None, "unknown"),
               preconditions=(not_pinned((ABC, "Example"), "toward the null"),
                              not_pinned((ABC, "Example"), "toward the null", column="text_letter"))),
    )


CLAIMS: tuple[ClaimSpec, ...] = declare()
#: Which unit table each claim reads (:func:`.claims_counts.tables`).
TABLES = {c.id: "sweep" if c.id.startswith("temperature_") else
          "control" if c.id == "example_abc_lowers_first_token_C" else "main" for c in CLAIMS}
#: The paper models each table-backed claim is stated for (layout.PAPER_MODELS keys): all six but the
#: exceptions the paper names — Mistral-7b-Instruct-v0.2 (§4.1, twice), Mixtral (§4.3), and Mistral-7b-Instruct
#: -v0.1, the low-mismatch model (§4.1, Appendix A.4) the conclusion leaves out ("five out of six").
_ALL = ("llama2-7b-chat", "llama2-13b-chat", "llama2-70b-chat", "mistral-7b-instruct-v0.1",
        "mistral-7b-instruct-v0.2", "mixtral-8x7b-instruct-v0.1")
COVERED = {"mismatch_over_60_percent": _ALL,
           "mismatch_persists_when_constrained": tuple(m for m in _ALL if m != "mistral-7b-instruct-v0.1"),
           "mismatch_decreases_low_to_high": tuple(m for m in _ALL if m != "mistral-7b-instruct-v0.2"),
           "example_more_mismatch_than_high": tuple(m for m in _ALL if m != "mistral-7b-instruct-v0.2"),
           "example_pulls_first_token_to_C": ("llama2-70b-chat",),
           "text_more_consistent": tuple(m for m in _ALL if m != "mixtral-8x7b-instruct-v0.1")}


def findings(inputs: Mapping[str, Any], config: Mapping[str, Any]):
    """The study's claims ledger (``StudySpec.findings.measure``): a :class:`wobble.report.findings.Ledger`."""
    from wobble.models.describe import model_label
    from wobble.report.findings import Ledger
    from wobble.studies.first_token.claims_counts import sweep_note, tables
    from wobble.studies.first_token.claims_io import paper_effects, read_labeled, refusal_bounds
    from wobble.studies.first_token.claims_measure import measure
    from wobble.studies.first_token.layout import main_temperature
    from wobble.studies.first_token.table_parts import classifier_text

    cfg = config[STUDY]
    main = main_temperature(cfg)
    models = list(cfg["models"])
    n_boot, seed = cfg["bootstrap"]["n"], cfg["bootstrap"]["seed"]
    records = read_labeled(inputs["labeled"])
    unit_tables, prompts = tables(records, main, TABLES)
    claims = declare(len(models), n_boot, seed)
    effects, shown = paper_effects(inputs, claims, COVERED)
    shown["refusal_major_reason_for_mismatch"] = refusal_bounds(inputs)
    claims = [replace(c, paper_value=shown[c.id]) if c.id in shown else c for c in claims]
    rows = measure(claims, unit_tables, models, paper_effects=effects, n_boot=n_boot, seed=seed)
    used = ", ".join(sorted({r["classifier"] for r in records if r.get("classifier")})) or cfg["classifier"]
    notes = (f"Ours: {'; '.join(model_label(config['models'], m) for m in cfg['models'])}; "
             f"{cfg['n_questions'] or 414} questions x {cfg['n_shuffles']} shuffles; the four levels at the main "
             f"temperature {float(main):.2f}; temperature rows: "
             f"{sweep_note(prompts, PAPER_SWEEP_MAX) or 'one temperature run'}; text answers labelled by "
             f"{classifier_text(used)} (first_token.classifier: {cfg['classifier']}).",
             "Paper: six 7B-70B chat models (Llama2 7b/13b/70b-Chat, Mistral-7B-Instruct v0.1/v0.2, Mixtral); its "
             "per-model numbers are the released mapping_result.json means (Figure 2a), Table 3 and Figures 3a/7. "
             f"It does not print Figure 4's temperatures: a highest temperature above {PAPER_SWEEP_MAX:g} is "
             "labelled extrapolation.",
             "Positional answering is wobble's control, not the paper's: per cell, the share of questions whose "
             "answer keeps its letter rather than its option over the shuffles. The text's gates the rows that "
             "read the text (failed where its one-sided 95% lower bound over questions exceeds 0.5); the first "
             "token's is the paper's own selection-bias finding, printed beside the rows on the first token's "
             "letters and consistency and gating none.")
    return Ledger('Claims ledger: first_token (Wang et al. 2024, "My Answer is C")', rows, notes)
