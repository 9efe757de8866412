"""The instruction conditions of Gu et al. 2023: what definition a model sees for a task.

:data:`CONDITIONS` lists them in the paper's table order. The keys of the nine perturbation
conditions are the ``condition`` keys of ``paper/instructions/table4.csv`` (also Tables 5, 10, 11) and
the labels are its ``condition_label`` strings, so our results join the paper's on ``condition``:

===================== ============ ===========================
key                   level        paper label
===================== ============ ===========================
original              original     original instruction
delete_stopwords      word         delete stopwords
delete_words          word         delete [5,10] words
insert_words          word         insert [5,10] words
replace_words         word         replace [5,10] words
shuffle_words         word         shuffle words
repeat_sentences      sentence     repeat sentences
shuffle_sentences     sentence     shuffle sentences
shuffle_instructions  instruction  shuffle instructions
paraphrase_1..3       paraphrase   New Instruction 1..3 (Table 6; pooled as "rephrased" in Table 7)
diverse_prompt_1..10  diverse_prompt  prompt i of a DiversePrompt task (Tables 8-9)
===================== ============ ===========================

The paper's CSVs write the level of ``original`` as ``none``; here it is ``original`` (``paper_level``
keeps ``none``). ``paper_key`` is the value to join on: the key itself for the nine perturbation
conditions, ``rephrased`` for the paraphrases (Table 7 ``instruction``), ``diverse_prompt`` for the
DiversePrompt prompts (Table 8 reports mean±std over a task's prompts).

:func:`apply_condition` gives the definition for one (condition, task, seed); the random generator is
``random.Random(derive_seed(seed, task, condition.key))``, so a task's text does not depend on which other
tasks are processed or in which order. :func:`apply_condition_batch` does the same for many tasks with a
single proposer call per round of redraws (insert/replace words) and returns identical texts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from wobble.errors import WobbleError
from wobble.seeding import make_rng
from wobble.studies.instructions import insert_replace as IR
from wobble.studies.instructions import perturb as P

N_PARAPHRASES = 3
DIVERSE_PROMPT_MAX = 10  # the most prompts a DiversePrompt task has (data/diverse_prompt/index.tsv)


@dataclass(frozen=True)
class Condition:
    key: str
    level: str  # original | word | sentence | instruction | paraphrase | diverse_prompt
    label: str  # the paper's label
    variant: int | None = None  # 1-based index into the alternative definitions (paraphrase, diverse_prompt)

    @property
    def paper_level(self) -> str:
        return "none" if self.level == "original" else self.level

    @property
    def paper_key(self) -> str:
        if self.level == "paraphrase":
            return "rephrased"
        if self.level == "diverse_prompt":
            return "diverse_prompt"
        return self.key

    @property
    def needs_proposer(self) -> bool:
        return self.key in ("insert_words", "replace_words")

    @property
    def is_random(self) -> bool:
        return self.level in ("word", "sentence", "instruction") and self.key != "delete_stopwords"


PAPER_CONDITIONS: tuple[Condition, ...] = (
    Condition("original", "original", "original instruction"),
    Condition("delete_stopwords", "word", "delete stopwords"),
    Condition("delete_words", "word", "delete [5,10] words"),
    Condition("insert_words", "word", "insert [5,10] words"),
    Condition("replace_words", "word", "replace [5,10] words"),
    Condition("shuffle_words", "word", "shuffle words"),
    Condition("repeat_sentences", "sentence", "repeat sentences"),
    Condition("shuffle_sentences", "sentence", "shuffle sentences"),
    Condition("shuffle_instructions", "instruction", "shuffle instructions"),
)
PARAPHRASE_CONDITIONS: tuple[Condition, ...] = tuple(
    Condition(f"paraphrase_{i}", "paraphrase", f"New Instruction {i}", i) for i in range(1, N_PARAPHRASES + 1))
DIVERSE_PROMPT_CONDITIONS: tuple[Condition, ...] = tuple(
    Condition(f"diverse_prompt_{i}", "diverse_prompt", f"prompt {i}", i) for i in range(1, DIVERSE_PROMPT_MAX + 1))

CONDITIONS: tuple[Condition, ...] = PAPER_CONDITIONS + PARAPHRASE_CONDITIONS + DIVERSE_PROMPT_CONDITIONS
CONDITION_KEYS: tuple[str, ...] = tuple(c.key for c in CONDITIONS)
_BY_KEY = {c.key: c for c in CONDITIONS}


def get_condition(condition: str | Condition) -> Condition:
    """The :class:`Condition` for a key (``diverse_prompt_<i>`` is accepted for any i >= 1)."""
    if isinstance(condition, Condition):
        return condition
    if condition in _BY_KEY:
        return _BY_KEY[condition]
    if condition.startswith("diverse_prompt_") and condition.rsplit("_", 1)[1].isdigit():
        i = int(condition.rsplit("_", 1)[1])
        if i >= 1:
            return Condition(condition, "diverse_prompt", f"prompt {i}", i)
    raise KeyError(f"unknown instruction condition {condition!r}; known: {', '.join(CONDITION_KEYS[:12])}, "
                   f"diverse_prompt_<i>")


def condition_rng(seed: int, task: str, condition: str | Condition):
    """``random.Random`` for one (seed, task, condition)."""
    return make_rng(seed, task, get_condition(condition).key)


def _alternative(cond: Condition, task: str, paraphrases: Mapping[str, Sequence[str]] | None) -> str:
    if paraphrases is None:
        raise ValueError(f"condition {cond.key!r} needs `paraphrases` (task -> list of alternative definitions)")
    alts = paraphrases.get(task)
    if alts is None or len(alts) < cond.variant:
        have = 0 if alts is None else len(alts)
        raise KeyError(f"condition {cond.key!r}: task {task!r} has {have} alternative definitions, "
                       f"needs at least {cond.variant}")
    return alts[cond.variant - 1]


def apply_condition_batch(condition: str | Condition, definitions: Mapping[str, str] | Iterable[tuple[str, str]],
                          seed: int, *, definitions_by_task: Mapping[str, str] | None = None,
                          proposer: Any = None,
                          paraphrases: Mapping[str, Sequence[str]] | None = None) -> dict[str, str]:
    """Apply ``condition`` to every ``task -> definition``; returns ``task -> new definition``.

    ``definitions_by_task``: the pool for ``shuffle_instructions`` (the test tasks; defaults to
    ``definitions``). ``proposer``: for insert/replace words (see :mod:`wobble.studies.instructions.insert_replace`); all
    masked positions of all tasks go to ONE ``propose_many`` call per round of redraws. ``paraphrases``: ``task -> [text, ...]``
    for ``paraphrase_<i>`` / ``diverse_prompt_<i>`` (the i-th text, 1-based).
    """
    cond = get_condition(condition)
    items = list(definitions.items()) if isinstance(definitions, Mapping) else list(definitions)
    key = cond.key
    out: dict[str, str] = {}
    if key == "original":
        return {task: d for task, d in items}
    if cond.level in ("paraphrase", "diverse_prompt"):
        return {task: _alternative(cond, task, paraphrases) for task, _ in items}
    if key == "delete_stopwords":
        return {task: P.delete_stopwords(d) for task, d in items}
    if cond.needs_proposer:
        if proposer is None:
            raise ValueError(f"condition {key!r} needs a proposer (MaskedLMProposer, CausalLMProposer or a callable)")
        planner = IR.plan_insert_words if key == "insert_words" else IR.plan_replace_words
        plans = [planner(d, condition_rng(seed, task, cond)) for task, d in items]
        texts = IR.fill_plans(plans, proposer)
        return {task: t for (task, _), t in zip(items, texts)}
    for task, d in items:
        rng = condition_rng(seed, task, cond)
        if key == "delete_words":
            out[task] = P.delete_words(d, rng)
        elif key == "shuffle_words":
            out[task] = P.shuffle_words(d, rng)
        elif key == "repeat_sentences":
            out[task] = P.repeat_sentence(d, rng)
        elif key == "shuffle_sentences":
            out[task] = P.shuffle_sentences(d, rng)
        elif key == "shuffle_instructions":
            pool = definitions_by_task if definitions_by_task is not None else dict(items)
            out[task] = P.shuffle_instructions(task, pool, rng)
        else:  # pragma: no cover - every registered key is handled above
            raise KeyError(key)
    return out


def apply_condition(condition: str | Condition, task: str, definition: str, seed: int, *,
                    definitions_by_task: Mapping[str, str] | None = None, proposer: Any = None,
                    paraphrases: Mapping[str, Sequence[str]] | None = None) -> str:
    """The definition the model sees for ``task`` under ``condition`` (run seed ``seed``).

    ``shuffle_instructions`` needs ``definitions_by_task`` (the pool of test tasks' definitions);
    ``insert_words`` / ``replace_words`` need ``proposer``; ``paraphrase_<i>`` / ``diverse_prompt_<i>``
    need ``paraphrases`` (``task -> [alternative definition, ...]``).
    """
    if get_condition(condition).key == "shuffle_instructions" and definitions_by_task is None:
        raise ValueError("condition 'shuffle_instructions' needs definitions_by_task (the pool of test tasks)")
    return apply_condition_batch(condition, [(task, definition)], seed, definitions_by_task=definitions_by_task,
                                 proposer=proposer, paraphrases=paraphrases)[task]


def cli_perturb(condition: str, text: str, seed: int = 1, task: str = "cli", *, proposer: Any = None,
                definitions_by_task: Mapping[str, str] | None = None,
                paraphrases: Mapping[str, Sequence[str]] | None = None) -> str:
    """``wobble perturb CONDITION --text T``: :func:`apply_condition` on one text (task name ``task`` enters the
    seed). Conditions that need a proposer, a task pool or paraphrases fail with a
    :class:`~wobble.errors.WobbleError` unless those are given."""
    try:
        return apply_condition(condition, task, text, seed, definitions_by_task=definitions_by_task,
                               proposer=proposer, paraphrases=paraphrases)
    except (KeyError, ValueError) as e:
        raise WobbleError(str(e.args[0]) if e.args else str(e)) from None


__all__ = [
    "Condition", "CONDITIONS", "CONDITION_KEYS", "PAPER_CONDITIONS", "PARAPHRASE_CONDITIONS",
    "DIVERSE_PROMPT_CONDITIONS", "N_PARAPHRASES", "DIVERSE_PROMPT_MAX", "get_condition", "condition_rng",
    "apply_condition", "apply_condition_batch", "cli_perturb",
]
