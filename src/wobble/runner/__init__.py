"""One runner for model calls, used by every study: batched (length-sorted) and resumable.

* :func:`generate_resumable` — one generation per record (:mod:`wobble.runner.generate`).
* :func:`score_next_token_resumable`, :func:`score_continuations_resumable` — label-word / letter
  scoring and continuation log-probs (:mod:`wobble.runner.score`).
* :func:`run_dialogues_resumable` — multi-turn dialogues, each turn built from the model's previous
  answer; :func:`run_dialogue_sets_resumable` for several outputs asked as one set
  (:mod:`wobble.runner.dialogue`).

Each writes one JSONL record per input record with the exact rendered prompt, the call parameters
and the raw output; a killed job leaves ``<out>.partial`` (:mod:`wobble.runner.partial`) that the
next run continues.
"""

from wobble.runner.dialogue import run_dialogue_sets_resumable, run_dialogues_resumable
from wobble.runner.generate import generate_resumable
from wobble.runner.partial import finish_partial, finished_uids, partial_path
from wobble.runner.score import score_continuations_resumable, score_next_token_resumable

__all__ = ["generate_resumable", "score_next_token_resumable", "score_continuations_resumable",
           "run_dialogues_resumable", "run_dialogue_sets_resumable", "finish_partial", "finished_uids", "partial_path"]
