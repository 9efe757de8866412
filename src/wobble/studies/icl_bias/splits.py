"""Underspecified demonstrations and disambiguating test sets of Si et al. (2023), §2.1 and §4.1.

For a pair, every example falls in a cell ``(h1, h2)``. The construction (same for the authors'
released split and for a pool rebuilt with the pair's feature function):

* **prompt sets**: each of the ``n_sets`` prompt sets draws its ``shots`` demonstrations from the
  agreeing cells (1,1) and (0,0), half from each, with the shared class-balanced sampler
  (:func:`wobble.adapters.icl.balanced_sample`, a seed per set), which also puts them in a seeded
  random order (§4.1: "we randomly sample a balanced set of 16 demonstration examples (randomly
  shuffled)"; "we randomly sample three sets of prompts"); sets are independent samples;
* **disambiguation pool** (§5.1 "Disambig"): ``shots/4`` x ``n_sets`` items held out of each
  disagreeing cell (1,0) and (0,1); a disambiguating prompt set draws ``shots/4`` from each of the
  four cells, so half its demonstrations disagree (labelled by the intended feature when the prompt
  is built);
* **test set**: the rest of the disagreeing cells, minus every item whose text appears among the
  demonstration or disambiguation items (the authors' run script skips such test items), balanced:
  ``min(n_test_per_cell, |(1,0)|, |(0,1)|)`` of each, in seeded order.

Unlike the authors' script, whose disambiguating demonstrations are drawn from the test lists and
skipped at test time, our test set is fixed per pair, so every intervention and prompt set is
scored on the same items (paired effects). A pair whose cells are too small is returned
unavailable with the reason (never silently dropped).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

from wobble.adapters.icl import balanced_sample
from wobble.seeding import derive_seed, seeded_order
from wobble.studies.icl_bias.features import LENGTH_WORDS
from wobble.studies.icl_bias.pairs import Pair, split_source
from wobble.studies.icl_bias.pools import build_pool, released_cells

AGREE = ((1, 1), (0, 0))
DISAGREE = ((1, 0), (0, 1))
CELLS = AGREE + DISAGREE


@dataclass(frozen=True)
class SplitParams:
    """Sizes and seed of a pair's split (the paper: 16 shots, 3 prompt sets, 600 test items per cell)."""

    shots: int = 16
    n_sets: int = 3
    n_test_per_cell: int = 600
    min_test_per_cell: int = 20
    seed: int = 0
    max_words: int | None = None  # rebuilt single-text pools: keep the last N words (None: whole texts)

    def __post_init__(self):
        if self.shots <= 0 or self.shots % 4:
            raise ValueError(f"shots must be a positive multiple of 4 (half disambiguating), got {self.shots}")
        if self.n_sets < 1 or self.n_test_per_cell < 1 or self.min_test_per_cell < 1:
            raise ValueError("n_sets, n_test_per_cell and min_test_per_cell must be >= 1")
        if self.max_words is not None and self.max_words <= LENGTH_WORDS:
            raise ValueError(f"max_words must exceed the {LENGTH_WORDS}-word length threshold, got {self.max_words}")


def cell_name(cell: tuple[int, int]) -> str:
    return f"{cell[0]}_{cell[1]}"


def label_cells(pair: Pair, pool: Iterable[dict]) -> dict[tuple[int, int], list[dict]]:
    """Pool items sorted into cells ``(h1, h2)`` by the pair's feature; items where it is None are left out."""
    cells: dict[tuple[int, int], list[dict]] = {c: [] for c in CELLS}
    for item in pool:
        h2 = pair.h2(item)
        if h2 is not None:
            cells[(item["h1"], h2)].append({**item, "h2": int(h2)})
    return cells


def _ordered(cell_items: Sequence[dict], pair: str, cell: tuple[int, int], seed: int) -> list[dict]:
    return seeded_order(cell_items, seed, key=lambda it: it["id"], salt=f"icl_bias/{pair}/{cell_name(cell)}")


def _record(pair: str, item: dict, role: str) -> dict:
    return {"uid": f"{pair}:{item['id']}", "role": role, "text": item["text"], "h1": item["h1"], "h2": item["h2"]}


def _unavailable(pair: str, source: str, reason: str, counts: dict, params: SplitParams) -> dict:
    return {"pair": pair, "source": source, "available": False, "reason": reason, "params": asdict(params),
            "counts": counts, "items": [], "prompt_sets": []}


def build_split(pair: Pair, cells: dict[tuple[int, int], list[dict]], params: SplitParams, source: str) -> dict:
    """The pair's demonstration, disambiguation and test items and its prompt sets (see module doc).

    Returns ``{"pair", "source", "available", "reason", "params", "counts", "items", "prompt_sets"}``;
    an item is ``{"uid", "role": "demo"|"disambig"|"test", "text", "h1", "h2"}``, a prompt set
    ``{"set", "kind": "plain"|"disambig", "demos": [uid, ...]}`` in prompt order.
    """
    half, quarter = params.shots // 2, params.shots // 4
    counts = {f"pool_{cell_name(c)}": len(cells.get(c, [])) for c in CELLS}
    ordered = {c: _ordered(cells.get(c, []), pair.key, c, params.seed) for c in CELLS}
    for c in AGREE:
        if len(ordered[c]) < half:
            return _unavailable(pair.key, source, f"pool too small: {len(ordered[c])} ({cell_name(c)}) examples "
                                f"where h1 = h2, need {half} per prompt", counts, params)
    n_dis = quarter * params.n_sets
    disambig = {c: ordered[c][:n_dis] for c in DISAGREE}
    sets = _prompt_sets(pair.key, ordered, disambig, params) if min(len(disambig[c]) for c in DISAGREE) >= n_dis else []
    used = {u for ps in sets for u in ps["demos"]}
    demos = {c: [it for it in ordered[c] if f"{pair.key}:{it['id']}" in used] for c in AGREE}
    shown = {it["text"].strip() for c in AGREE for it in demos[c]}
    shown |= {it["text"].strip() for c in DISAGREE for it in disambig[c]}
    remaining = {c: [it for it in ordered[c][n_dis:] if it["text"].strip() not in shown] for c in DISAGREE}
    counts["dropped_in_demos"] = sum(len(ordered[c][n_dis:]) - len(remaining[c]) for c in DISAGREE)
    n_test = min(params.n_test_per_cell, *(len(remaining[c]) for c in DISAGREE))
    if not sets or n_test < params.min_test_per_cell:
        sizes = ", ".join(f"{len(ordered[c])} ({cell_name(c)})" for c in DISAGREE)
        return _unavailable(pair.key, source, f"pool too small: {sizes} examples where h1 != h2; need {n_dis} per "
                            f"cell for disambiguation plus at least {params.min_test_per_cell} test items",
                            counts, params)
    items = [_record(pair.key, it, "demo") for c in AGREE for it in demos[c]]
    items += [_record(pair.key, it, "disambig") for c in DISAGREE for it in disambig[c]]
    items += [_record(pair.key, it, "test") for c in DISAGREE for it in remaining[c][:n_test]]
    counts.update({f"demo_{cell_name(c)}": len(demos[c]) for c in AGREE})
    counts.update({f"test_{cell_name(c)}": n_test for c in DISAGREE})
    return {"pair": pair.key, "source": source, "available": True, "reason": "", "params": asdict(params),
            "counts": counts, "items": items, "prompt_sets": sets}


def _prompt_sets(pair: str, ordered: dict, disambig: dict, params: SplitParams) -> list[dict]:
    """Per set: a plain set (``shots/2`` per agreeing cell) and a disambiguating one (``shots/4`` per cell)."""
    agree = [it for c in AGREE for it in ordered[c]]
    mixed = agree + [it for c in DISAGREE for it in disambig[c]]
    sets = []
    for s in range(params.n_sets):
        for kind, pool, groups in (("plain", agree, AGREE), ("disambig", mixed, CELLS)):
            chosen = balanced_sample(pool, params.shots, lambda it: (it["h1"], it["h2"]),
                                     derive_seed(params.seed, pair, kind, s), key=lambda it: it["id"], groups=groups,
                                     salt=f"icl_bias/{pair}")
            sets.append({"set": s, "kind": kind, "demos": [f"{pair}:{it['id']}" for it in chosen]})
    return sets


def check_split(split: dict) -> list[str]:
    """Invariant violations of a built split (empty list = all hold); see the module docstring."""
    if not split["available"]:
        return []
    problems: list[str] = []
    items = {it["uid"]: it for it in split["items"]}
    if len(items) != len(split["items"]):
        problems.append("item uids are not unique")
    by_role: dict[str, list[dict]] = {"demo": [], "disambig": [], "test": []}
    for it in split["items"]:
        by_role[it["role"]].append(it)
    if any(it["h1"] != it["h2"] for it in by_role["demo"]):
        problems.append("a demonstration item has h1 != h2")
    if any(it["h1"] == it["h2"] for it in by_role["disambig"] + by_role["test"]):
        problems.append("a disambiguation or test item has h1 = h2")
    test_counts = [sum(it["h1"] == v for it in by_role["test"]) for v in (1, 0)]
    if test_counts[0] != test_counts[1] or not by_role["test"]:
        problems.append(f"test set not balanced over (1,0) and (0,1): {test_counts}")
    shown = {it["text"].strip() for it in by_role["demo"] + by_role["disambig"]}
    if any(it["text"].strip() in shown for it in by_role["test"]):
        problems.append("a test item's text appears among the demonstrations")
    shots = split["params"]["shots"]
    for ps in split["prompt_sets"]:
        demos = [items[u] for u in ps["demos"]]
        cells = [(d["h1"], d["h2"]) for d in demos]
        want = ({c: shots // 2 for c in AGREE} if ps["kind"] == "plain" else {c: shots // 4 for c in CELLS})
        got = {c: cells.count(c) for c in want}
        if len(demos) != shots or len(set(ps["demos"])) != shots or got != want:
            problems.append(f"prompt set {ps['set']} ({ps['kind']}): cells {got}, expected {want}")
    return problems


def demo_label(item: dict, kind: str, target: str) -> int:
    """The label a demonstration shows: h1 (= h2) in a plain set, the ``target`` feature in a disambiguating one."""
    if target not in ("h1", "h2"):
        raise ValueError(f"target must be 'h1' or 'h2', got {target!r}")
    return item["h1"] if kind == "plain" else item[target]


def split_for_pair(pair: Pair, datasets: dict, params: SplitParams, prefer: str = "authors") -> dict:
    """The pair's split from its source (:func:`~wobble.studies.icl_bias.pairs.split_source`).

    ``datasets`` maps a prepared dataset name (``ambigprompt``, ``imdb``, ``yelp``, ``mnli_genre``) to
    its records; only the ones the source needs are read.
    """
    source, reason = split_source(pair, prefer)
    if source is None:
        return _unavailable(pair.key, "none", reason, {}, params)
    if source == "authors":
        cells = released_cells(datasets["ambigprompt"], pair.key)
    else:
        cells = label_cells(pair, build_pool(source, datasets, params.max_words))
    return build_split(pair, cells, params, source)
