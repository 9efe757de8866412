"""Recipes: how each mirror file that no upstream file holds byte for byte is rebuilt from public upstreams.

A *recipe* is a pure function that turns pinned upstream files into one or more files of a source's folder.
It is declared in two places, both beside this module:

* ``<recipe>.py`` holds ``build(inputs) -> dict[str, bytes]``: ``inputs`` maps each input's ``name`` (below)
  to a local path (a file; a directory for an ``archive`` input), and the result maps every output's path
  relative to the source folder (the ``relpath`` of its row in ``pins.tsv``) to its bytes. No network, no
  clock, no randomness but seeded ``random.Random`` — the same inputs give the same bytes.
* ``<recipe>.tsv`` lists the recipe's inputs, one row each, columns ``name kind repo commit path url sha256
  size``: ``kind`` is ``file`` (one upstream file: its raw URL at ``commit``, its sha256 and size), ``archive``
  (a ``.tar.gz`` of a repository at ``commit``: ``path`` is the folder inside it that is kept, ``sha256`` the
  *tree digest* of that folder — :func:`wobble.data.derive.tree_digest` — since an archive's own bytes are not
  stable) or ``pin`` (another pinned file of the same source, ``path`` its relpath, acquired first).

:data:`RECIPES` names every recipe and the source it builds; ``pins.tsv``'s ``recipe`` column says which recipe
makes each file. :mod:`wobble.data.derive` fetches the inputs, checks them, runs the recipe and checks each
output's sha256 against its pin.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase


@dataclass(frozen=True)
class Recipe:
    """A recipe's name (its module and TSV beside this file), the source it builds files of, and the relpaths
    (``fnmatch`` patterns) of the files it makes."""

    name: str
    source: str
    outputs: tuple[str, ...]

    def makes(self, relpath: str) -> bool:
        return any(fnmatchcase(relpath, pattern) for pattern in self.outputs)


RECIPES: dict[str, Recipe] = {r.name: r for r in [
    Recipe("superni_partial", "superni", ("tasks_partial/*.json",)),
    Recipe("superni_tables", "superni", ("coverage.tsv", "test_categories.tsv")),
    Recipe("para_instructions", "para_instructions", ("para_instructions.json", "para_instructions.tsv")),
    Recipe("diverse_prompt", "diverse_prompt", ("index.tsv", "tasks/*.json")),
    Recipe("ambigprompt_features", "ambigprompt", ("feature_definitions.tsv",)),
    Recipe("opinionqa", "opinionqa", ("disagreement_500_ids.txt", "questions_all.jsonl", "subset_414.jsonl",
                                      "subset_414_ids.txt")),
    Recipe("icl_imdb", "icl_imdb", ("imdb_4000.jsonl", "imdb_short_lt40words_all.jsonl")),
    Recipe("icl_yelp", "icl_yelp", ("yelp_4000.jsonl",)),
    Recipe("icl_mnli", "icl_mnli", ("mnli_train_genre_kshot480.jsonl",)),
    Recipe("mmlu", "mmlu", ("dev_5shot.jsonl", "subject_counts.tsv", "test_sample500.jsonl")),
]}


def recipe_for(source: str, relpath: str) -> Recipe | None:
    """The recipe that makes ``relpath`` of ``source``, or None."""
    return next((r for r in RECIPES.values() if r.source == source and r.makes(relpath)), None)
