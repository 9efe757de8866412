"""Raw labelled pools for rebuilding the pairs' splits, from the prepared JSONL records.

An item is ``{"id": str, "text": str, "h1": 0|1, "meta": {...}}``; ``h1`` is the dataset's label
(positive review, toxic comment, entailment, answer "yes" = 1), ``meta`` holds what a metadata
feature reads (review ``domain``, MNLI ``genre``). Pools (:data:`POOL_DATASETS` names the prepared
datasets each reads):

* ``reviews``: IMDb (4,376) + Yelp (4,000) reviews, ``<br />`` markup removed (the text the model
  sees and the features read);
* ``mnli``: the MNLI pairs of the authors' nli_entailment_overlap split, all six lists
  (premise + "\\n" + hypothesis);
* ``mnli_genre``: the 480 genre-labelled MNLI pairs;
* ``civil_comments`` / ``boolq``: the union of the mirrored CivilComments / BoolQ split examples.

Duplicate texts are dropped (first occurrence kept); a text seen with both labels is dropped
entirely, since its h1 is undefined.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from wobble.studies.icl_bias.features import clean_review, truncate_words

POOL_DATASETS = {
    "reviews": ("imdb", "yelp"),
    "mnli": ("ambigprompt",),
    "mnli_genre": ("mnli_genre",),
    "civil_comments": ("ambigprompt",),
    "boolq": ("ambigprompt",),
}
RELEASED_LISTS = ("demos_1_1", "demos_0_0", "testset_1_0", "testset_0_1")
_AMBIG_PREFIX = {"mnli": "nli_entailment_overlap", "civil_comments": "comments_", "boolq": "boolq_"}


def dedupe_texts(items: Iterable[dict]) -> list[dict]:
    """Items with a unique (stripped) text, first occurrence kept; texts seen with two labels dropped."""
    first: dict[str, dict] = {}
    labels: dict[str, set[int]] = {}
    for item in items:
        key = item["text"].strip()
        labels.setdefault(key, set()).add(item["h1"])
        first.setdefault(key, item)
    return [item for key, item in first.items() if len(labels[key]) == 1]


def review_items(imdb: Iterable[Mapping], yelp: Iterable[Mapping], max_words: int | None = None) -> list[dict]:
    """IMDb then Yelp reviews as pool items (h1 = positive, meta.domain = "imdb" / "yelp")."""
    return [{"id": r["id"], "text": truncate_words(clean_review(r["text"]), max_words), "h1": int(r["label"]),
             "meta": {"domain": r["domain"]}} for source in (imdb, yelp) for r in source]


def genre_items(mnli_genre: Iterable[Mapping]) -> list[dict]:
    """Genre-labelled MNLI pairs as pool items (h1 = entailment, meta.genre)."""
    return [{"id": r["id"], "text": f"{r['premise']}\n{r['hypothesis']}", "h1": int(r["label"]),
             "meta": {"genre": r["genre"]}} for r in mnli_genre]


def ambig_items(records: Iterable[Mapping], prefix: str) -> list[dict]:
    """Examples of the released splits whose pair name starts with ``prefix``, as pool items."""
    return [{"id": f"{r['pair']}/{r['list']}/{r['id']}", "text": r["text"], "h1": int(r["h1"]), "meta": {}}
            for r in records if r["pair"].startswith(prefix)]


def build_pool(name: str, datasets: Mapping[str, Sequence[Mapping]], max_words: int | None = None) -> list[dict]:
    """The deduplicated pool ``name`` from the prepared records ``datasets[<dataset>]``.

    ``max_words``: single-text pools (reviews, comments) keep the last ``max_words`` words of each
    text BEFORE features are computed, so a feature describes the text the model is shown.
    """
    if name == "reviews":
        items = review_items(datasets["imdb"], datasets["yelp"], max_words)
    elif name == "mnli_genre":
        items = genre_items(datasets["mnli_genre"])
    elif name in _AMBIG_PREFIX:
        items = ambig_items(datasets["ambigprompt"], _AMBIG_PREFIX[name])
        if name == "civil_comments":
            items = [{**it, "text": truncate_words(it["text"], max_words)} for it in items]
    else:
        raise ValueError(f"unknown pool {name!r}; expected one of {sorted(POOL_DATASETS)}")
    return dedupe_texts(items)


def released_cells(records: Iterable[Mapping], pair: str) -> dict[tuple[int, int], list[dict]]:
    """The authors' split of ``pair`` as cells ``(h1, h2) -> items`` in file order.

    Demonstration cells come from ``demos_1_1`` / ``demos_0_0``, disagreeing cells from
    ``testset_1_0`` / ``testset_0_1`` (the authors' run script also takes its disambiguating
    demonstrations from these); the agreeing test lists are not used (nothing is measured on them).
    """
    cells: dict[tuple[int, int], list[dict]] = {(1, 1): [], (0, 0): [], (1, 0): [], (0, 1): []}
    for r in records:
        if r["pair"] == pair and r["list"] in RELEASED_LISTS:
            cells[(int(r["h1"]), int(r["h2"]))].append(
                {"id": f"{r['list']}/{r['id']}", "text": r["text"], "h1": int(r["h1"]), "h2": int(r["h2"]), "meta": {}})
    return cells
