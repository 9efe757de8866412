"""Feature functions h(x) -> 1 / 0 / None of Si et al. (2023), §3 and Table 1.

One small pure function per feature. ``None`` means "neither value" (e.g. a review that ends with
neither "!" nor "."): such an example cannot serve the pair and is left out of its pools.

Definitions follow the authors' instruction strings (``feature_definitions.tsv`` of the data mirror,
the paper's Tables 7-8) and were checked against the 7 splits the authors released
(``tests/studies/icl_bias/test_icl_bias_splits.py`` measures the agreement):

* length: whitespace words; reviews and comments "shorter than 40 words" = 1, longer = 0; BoolQ
  passage "longer than 50 words" = 1, shorter = 0; a text of exactly the threshold is neither.
  Matches all 1,977 released boolq_answer_length examples.
* terminal punctuation: the last non-space character, "!" = 1, "." = 0.
* contains word ("food" / "nice"): the word as a whole token, any case ("seafood" does not count).
* capitalization: a token of letters and digits, at least 2 characters long, whose letters are all
  upper case (``str.isupper``: "THIS", "JJP58"; not "I", not "A"). Matches all 4,400 released
  comments_toxicity_uppercase examples.
* negation: the hypothesis contains "not", "no" or a word ending in "n't". **The source disagrees with
  itself** for nli_entailment_negation: its label map, verbalizer ("Negation?" 1 = yes) and
  explanation (Table 10, "(1) The second sentence contains negation words") say 1 = has a negation,
  its instruction (Table 8) says 1 = no negation. We take **1 = contains a negation word**.
* NLI lexical overlap (HANS, McCoy et al. 2019): every hypothesis word, lower-cased with ASCII
  punctuation removed, appears in the premise. Matches all 4,001 released nli_entailment_overlap pairs.
* BoolQ lexical overlap: every question word outside :data:`FUNCTION_WORDS` appears in the passage.
  The authors' instruction says "all words", but their released split does not follow that (about
  half of its overlap = 1 questions have a word like "is" or "from" that the passage lacks); the
  content-word rule (our function-word list) agrees on 1,394 of its 1,434 examples (97.2 %).
* question word: the question's first word, "is"/"was" = 1, "do"/"does"/"did" = 0.
* question structure: the question contains the phrase "same as".
* hypothesis length: the hypothesis (second line) has fewer words than the premise = 1, more = 0.
* domain (review source): IMDb = 1, Yelp = 0; MNLI genre: "government" = 1, "fiction" or
  "telephone" (one per pair) = 0 - metadata, not text.
* identity mentions (CivilComments): the share of annotators marking an identity, >= 0.5 counts
  as a mention (the WILDS CivilComments convention); 1 when only the "1" identities are mentioned,
  0 when only the "0" ones are. Our rule: the authors' split script is not released.
"""

from __future__ import annotations

import re
import string
from typing import Mapping, Sequence

LENGTH_WORDS = 40  # reviews and comments (Tables 7, 9)
PASSAGE_WORDS = 50  # BoolQ passages (Tables 8, 10)
NEGATION_WORDS = frozenset({"not", "no"})
BE_WORDS = frozenset({"is", "was"})
DO_WORDS = frozenset({"do", "does", "did"})
IDENTITY_THRESHOLD = 0.5

# Words a BoolQ question may hold without breaking "lexical overlap" (ours; see the module docstring).
FUNCTION_WORDS = frozenset("""
a an the this that these those
i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
who whom whose which what when where why how there here
is am are was were be been being do does did doing done have has had having get got
can could will would shall should may might must
of in on at by for with without from to into onto upon about above below over under out
between among through during before after against outside inside
and or but nor so if then than as because while although though yet
not no any all some every each either neither both
ever still also just only very too much many more most other another such same once always
one two anyone someone something anything everything s t
""".split())

_PUNCT_TABLE = str.maketrans("", "", string.punctuation)
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_ALNUM = re.compile(r"[A-Za-z0-9]+")
_WORD = re.compile(r"[a-z0-9]+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'"})


def clean_review(text: str) -> str:
    """IMDb review text with its ``<br />`` markup replaced by spaces and whitespace collapsed."""
    return " ".join(_BR.sub(" ", text).split())


def truncate_words(text: str, max_words: int | None) -> str:
    """The last ``max_words`` whitespace words of ``text`` (the authors' script also keeps the end of
    long inputs; the end holds the terminal punctuation); ``None``: unchanged."""
    if max_words is None:
        return text
    words = text.split()
    return text if len(words) <= max_words else " ".join(words[-max_words:])


def n_words(text: str) -> int:
    """Whitespace-separated words."""
    return len(text.split())


def _threshold(n: int, threshold: int, below: int) -> int | None:
    if n == threshold:
        return None
    return below if n < threshold else 1 - below


def is_short(text: str, threshold: int = LENGTH_WORDS) -> int | None:
    """Review / comment length: fewer than ``threshold`` words = 1 ("short"), more = 0 ("long")."""
    return _threshold(n_words(text), threshold, below=1)


def passage_is_long(passage: str, threshold: int = PASSAGE_WORDS) -> int | None:
    """BoolQ passage length: more than ``threshold`` words = 1 ("long"), fewer = 0 ("short")."""
    return _threshold(n_words(passage), threshold, below=0)


def ends_with_exclamation(text: str) -> int | None:
    """Terminal punctuation: last non-space character "!" = 1, "." = 0, anything else None."""
    stripped = text.rstrip()
    if stripped.endswith("!"):
        return 1
    if stripped.endswith("."):
        return 0
    return None


def contains_word(text: str, word: str) -> int:
    """1 when ``word`` occurs as a whole token (letters and digits), case-insensitively."""
    return int(word.lower() in _WORD.findall(text.lower()))


def has_uppercase_word(text: str) -> int:
    """1 when a letters-and-digits token of 2+ characters has only upper-case letters ("THIS")."""
    return int(any(len(tok) >= 2 and tok.isupper() for tok in _ALNUM.findall(text)))


def has_negation(text: str) -> int:
    """1 when the text contains "not", "no" or a word ending in "n't" (any case, ' or \u2019; a word in quotes
    counts: "'no'")."""
    for raw in text.translate(_APOSTROPHES).lower().split():
        tok = raw.strip(string.punctuation)
        if tok in NEGATION_WORDS or tok.endswith("n't"):
            return 1
    return 0


def _plain_words(text: str) -> list[str]:
    return text.lower().translate(_PUNCT_TABLE).split()


def hans_overlap(premise: str, hypothesis: str) -> int:
    """NLI lexical overlap: 1 when every hypothesis word appears in the premise.

    Words are lower-cased whitespace tokens with ASCII punctuation removed (so "Jets." = "jets").
    """
    premise_words = set(_plain_words(premise))
    return int(all(w in premise_words for w in _plain_words(hypothesis)))


def question_overlap(passage: str, question: str, ignore: frozenset[str] = FUNCTION_WORDS) -> int:
    """BoolQ lexical overlap: 1 when every question word not in ``ignore`` appears in the passage.

    Words are lower-case runs of letters and digits ("lord's" -> "lord", "s").
    """
    passage_words = set(_WORD.findall(passage.lower()))
    return int(all(w in passage_words for w in _WORD.findall(question.lower()) if w not in ignore))


def hypothesis_is_shorter(premise: str, hypothesis: str) -> int | None:
    """1 when the hypothesis has fewer words than the premise, 0 when more, None when equal."""
    p, h = n_words(premise), n_words(hypothesis)
    if p == h:
        return None
    return int(h < p)


def question_word(question: str) -> int | None:
    """1 for a question starting with "is"/"was", 0 for "do"/"does"/"did", else None."""
    words = question.lower().split()
    if not words:
        return None
    if words[0] in BE_WORDS:
        return 1
    if words[0] in DO_WORDS:
        return 0
    return None


def has_same_as(question: str) -> int:
    """Question structure: 1 when the question contains the phrase "same as" (any case)."""
    return int(re.search(r"\bsame as\b", question.lower()) is not None)


def review_domain(domain: str) -> int | None:
    """Review source: IMDb (movies) = 1, Yelp = 0."""
    return {"imdb": 1, "yelp": 0}.get(domain.lower())


def genre_value(genre: str, one: str, zero: str) -> int | None:
    """MNLI genre: ``one`` (e.g. "government") = 1, ``zero`` (e.g. "fiction") = 0, other genres None."""
    g = genre.lower()
    return 1 if g == one else 0 if g == zero else None


def identity_value(annotations: Mapping[str, float], one: Sequence[str], zero: Sequence[str],
                   threshold: float = IDENTITY_THRESHOLD) -> int | None:
    """CivilComments identity: 1 when only ``one`` identities are mentioned, 0 when only ``zero`` ones.

    ``annotations`` maps an identity column (e.g. "female") to the share of annotators who marked it;
    a share >= ``threshold`` is a mention. ``zero`` empty means "no ``one`` identity" (e.g. LGBTQ vs
    not). A comment mentioning both sides, or neither, is None.
    """
    def mentioned(cols: Sequence[str]) -> bool:
        return any(float(annotations.get(c, 0.0) or 0.0) >= threshold for c in cols)

    has_one, has_zero = mentioned(one), mentioned(zero) if zero else False
    if has_one and not has_zero:
        return 1
    if has_zero and not has_one:
        return 0
    if not zero and not has_one:
        return 0
    return None


def split_sentence_pair(text: str, last: bool = False) -> tuple[str, str]:
    """The two parts of a sentence-pair text joined by a newline (NLI: premise, hypothesis; BoolQ:
    passage, question). ``last``: split at the last newline (BoolQ questions are the last line)."""
    parts = text.rsplit("\n", 1) if last else text.split("\n", 1)
    if len(parts) != 2:
        raise ValueError(f"expected two newline-separated parts, got {text[:80]!r}")
    return parts[0], parts[1]
