"""The annotated OpinionQA responses the first_token classifier and judge tests read: the letters and options
of a five-option question, and one model's split from the data mirror."""

from __future__ import annotations

import json


LETTERS5 = ["A", "B", "C", "D", "E"]
OPTS5 = ["A great deal", "Not too much", "Not at all", "A fair amount", "Refused"]


def _rows(mirror, model, split):
    path = mirror / "opinionqa" / "annotated_responses" / model / f"{split}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
