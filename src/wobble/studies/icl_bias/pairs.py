"""The 22 dataset / feature pairs of Si et al. (2023) (Table 1; the split files of the authors' run
script) and, for each, where its splits can come from in this mirror.

A pair's splits come from the authors' released split (7 pairs, ``released``), or are rebuilt from a
raw pool with the pair's feature function (``pool``): IMDb + Yelp reviews for the six sentiment
pairs, MNLI pairs for NLI, the union of the mirrored CivilComments examples for comment length and
capitalization, the union of the mirrored BoolQ examples for BoolQ. A pair with neither is
``unavailable`` with its reason (the four CivilComments identity pairs: no identity annotations
here); a pair whose pool is too small is found unavailable when its splits are built
(:mod:`.splits`). Names shared with the paper's tables: ``task`` / ``feature_name`` (Tables 1, 6-10),
``code`` / ``row`` (Tables 4-5; pairs with the same row are averaged there, e.g. the two genre pairs),
``table3`` (Table 3 column, MNLI only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from wobble.errors import ConfigError
from wobble.studies.icl_bias import features as F

SA, TC, NLI, QA = "Sentiment analysis", "Toxicity classification", "Natural language inference", "Question answering"
H1_NAME = {SA: "Sentiment", TC: "Toxicity", NLI: "Entailment", QA: "Answer"}
CODE = {SA: "SA", TC: "TC", NLI: "NLI", QA: "QA"}
DATASET = {SA: "IMDb + Yelp", TC: "CivilComments", NLI: "MultiNLI", QA: "BoolQ"}
POOLS = ("reviews", "civil_comments", "mnli", "mnli_genre", "boolq")
NO_IDENTITY = ("no CivilComments identity annotations in this mirror (every annotated copy is a Git LFS "
               "pointer or over the snapshot size limit)")
LGBTQ_COLUMNS = ("homosexual_gay_or_lesbian", "bisexual", "transgender", "other_sexual_orientation")

Feature = Callable[[Mapping], "int | None"]


@dataclass(frozen=True)
class Pair:
    """One dataset / feature pair: h1 is the dataset's label, h2 the feature."""

    key: str
    task: str
    feature_name: str
    row: str
    h2: Feature
    pool: str | None = None
    released: bool = False
    choose: tuple[str, str] | None = None  # (this pair's word, the other pair's) in "a / b" texts
    table3: str | None = None
    unavailable: str | None = None

    @property
    def code(self) -> str:
        return CODE[self.task]

    @property
    def dataset(self) -> str:
        return DATASET[self.task]

    @property
    def h1_name(self) -> str:
        return H1_NAME[self.task]


def _text(fn: Callable[[str], "int | None"]) -> Feature:
    return lambda item: fn(item["text"])


def _second(fn: Callable[[str, str], "int | None"], last: bool = False) -> Feature:
    return lambda item: fn(*F.split_sentence_pair(item["text"], last=last))


def _question(fn: Callable[[str], "int | None"]) -> Feature:
    return lambda item: fn(F.split_sentence_pair(item["text"], last=True)[1])


def _passage(fn: Callable[[str], "int | None"]) -> Feature:
    return lambda item: fn(F.split_sentence_pair(item["text"], last=True)[0])


def _hypothesis(fn: Callable[[str], "int | None"]) -> Feature:
    return lambda item: fn(F.split_sentence_pair(item["text"])[1])


def _identity(one: tuple[str, ...], zero: tuple[str, ...]) -> Feature:
    return lambda item: F.identity_value(item["meta"]["identity"], one, zero)


def _genre(zero: str) -> Feature:
    return lambda item: F.genre_value(item["meta"]["genre"], "government", zero)


def _word(word: str) -> Feature:
    return lambda item: F.contains_word(item["text"], word)


_PAIRS = (
    Pair("nli_entailment_genre_gov_fic", NLI, "Domain", "genre", _genre("fiction"), pool="mnli_genre",
         choose=("fiction", "telephone"), table3="Govt/Fiction"),
    Pair("nli_entailment_genre_gov_tele", NLI, "Domain", "genre", _genre("telephone"), pool="mnli_genre",
         choose=("telephone", "fiction"), table3="Govt/Telephone"),
    Pair("nli_entailment_length", NLI, "Hypothesis length", "length", _second(F.hypothesis_is_shorter), pool="mnli",
         table3="Length"),
    Pair("nli_entailment_negation", NLI, "Hypothesis negation", "negation", _hypothesis(F.has_negation), pool="mnli",
         table3="Negation"),
    Pair("nli_entailment_overlap", NLI, "Lexical overlap", "overlap", _second(F.hans_overlap), pool="mnli",
         released=True, table3="Overlap"),
    Pair("sa_sentiment_domain", SA, "Domain", "domain", lambda item: F.review_domain(item["meta"]["domain"]),
         pool="reviews"),
    Pair("sa_sentiment_length", SA, "Length", "length", _text(F.is_short), pool="reviews"),
    Pair("sa_sentiment_lexicon_food", SA, "Contains word", "lexicon", _word("food"), pool="reviews",
         choose=("food", "nice")),
    Pair("sa_sentiment_lexicon_nice", SA, "Contains word", "lexicon", _word("nice"), pool="reviews",
         choose=("nice", "food")),
    Pair("sa_sentiment_punctuation", SA, "Terminal punctuation", "punctuation", _text(F.ends_with_exclamation),
         pool="reviews"),
    Pair("sa_sentiment_uppercase", SA, "Capitalization", "capitalization", _text(F.has_uppercase_word),
         pool="reviews"),
    Pair("comments_toxicity_gender", TC, "Gender", "gender", _identity(("female",), ("male",)),
         unavailable=NO_IDENTITY),
    Pair("comments_toxicity_gender_lgbtq", TC, "Sexuality", "gender", _identity(LGBTQ_COLUMNS, ()),
         unavailable=NO_IDENTITY),
    Pair("comments_toxicity_length", TC, "Length", "length", _text(F.is_short), pool="civil_comments"),
    Pair("comments_toxicity_race_black_white", TC, "Race", "race", _identity(("black",), ("white",)),
         unavailable=NO_IDENTITY),
    Pair("comments_toxicity_religion_muslim_christian", TC, "Religion", "religion",
         _identity(("muslim",), ("christian",)), choose=("Christian", "Jewish"), unavailable=NO_IDENTITY),
    Pair("comments_toxicity_religion_muslim_jewish", TC, "Religion", "religion", _identity(("muslim",), ("jewish",)),
         released=True, choose=("Jewish", "Christian")),
    Pair("comments_toxicity_uppercase", TC, "Capitalization", "capitalization", _text(F.has_uppercase_word),
         pool="civil_comments", released=True),
    Pair("boolq_answer_length", QA, "Passage length", "length", _passage(F.passage_is_long), pool="boolq",
         released=True),
    Pair("boolq_answer_overlap", QA, "Lexical overlap", "overlap", _second(F.question_overlap, last=True),
         pool="boolq", released=True),
    Pair("boolq_answer_qword", QA, "Question word", "Q word", _question(F.question_word), pool="boolq",
         released=True),
    Pair("boolq_answer_structure", QA, "Question structure", "structure", _question(F.has_same_as), pool="boolq",
         released=True),
)

PAIRS: dict[str, Pair] = {p.key: p for p in _PAIRS}
TASKS = (SA, TC, NLI, QA)


def get_pair(key: str, config_key: str = "icl_bias.pairs") -> Pair:
    """The pair named ``key``; an unknown name stops with the allowed ones."""
    if key not in PAIRS:
        raise ConfigError(config_key, f"unknown pair {key!r}; expected one of {sorted(PAIRS)}")
    return PAIRS[key]


def split_source(pair: Pair, prefer: str = "authors") -> tuple[str | None, str]:
    """Where ``pair``'s splits come from and why: ``("authors" | pool name | None, reason)``.

    ``prefer="authors"`` uses the released split where there is one (the authors' exact examples),
    ``prefer="rebuild"`` rebuilds from the pool where there is one. ``None`` = unavailable here.
    """
    if prefer not in ("authors", "rebuild"):
        raise ConfigError("icl_bias.splits.prefer", f"'authors' or 'rebuild', got {prefer!r}")
    if pair.released and (prefer == "authors" or pair.pool is None):
        return "authors", "the authors' released split"
    if pair.pool is not None:
        return pair.pool, f"rebuilt from the {pair.pool} pool with the feature function"
    return None, pair.unavailable or "no released split and no raw pool in this mirror"
