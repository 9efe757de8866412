"""Seeded perturbations of a task definition (Gu et al. 2023, Table 3).

Every perturbation is a small pure function of the definition text and a ``random.Random``; the
random generator is seeded by :func:`derive_seed` from (run seed, task name, condition key), so the
same inputs always give the same text, independently of process, platform or ``PYTHONHASHSEED``.

Words
-----
A *word* is a maximal run of letters and digits (any script), where runs joined by an apostrophe or a
hyphen count as one word ("you're", "O'Neil", "key-value", "B-PER"): regex :data:`WORD_RE`. This is a
context-free definition, so deleting, inserting or replacing one word never changes how the rest of the
text splits into words, and every contract below holds exactly on :func:`words`. (Apart from the
apostrophe/hyphen joining, it is the word split of BERT's basic tokenizer that the authors' fork used:
punctuation and underscores are not words.)

Word level
  * :func:`delete_stopwords` - every word that is a spaCy English stop word (``STOP_WORDS``,
    case-insensitive) is removed; a contraction counts as a stop word when every piece spaCy's
    tokenizer splits it into is one ("you're" -> "you" + "'re", "can't" -> "ca" + "n't").
  * :func:`delete_words` - ``k = rng.randint(5, 10)`` random words removed, capped at ``len(words) - 1``
    for short texts (at least one word always remains). The remaining words keep their order.
  * :func:`insert_words` - ``k`` words inserted at ``k`` distinct random slots (before any word, or
    after the last word); capped at the number of slots (``len(words) + 1``).
  * :func:`replace_words` - ``k`` distinct random words replaced; capped at ``len(words)``.
  * :func:`shuffle_words` - the whitespace-separated chunks are permuted and joined by single spaces,
    so punctuation travels with its word, exactly as in the paper's Table 3 example
    ("... need task, In the will ..."). The multiset of words is unchanged.

Sentence level (sentences from spaCy's rule-based ``sentencizer``; stripped, empty ones dropped)
  * :func:`repeat_sentence` - one random sentence is copied and appended after the last sentence.
  * :func:`shuffle_sentences` - the sentences are permuted (a different order whenever the text has
    at least two distinct sentences) and joined by single spaces.
  Both join with one space, as the authors' fork did; a sentence without final punctuation (in SuperNI
  often the last one) then runs into the one after it, and newlines between sentences become spaces.

Instruction level
  * :func:`shuffle_instructions` - the definition of another, randomly chosen task.

Whitespace when deleting: removing a word also removes one of the two whitespace runs around it (the
one with more newlines; the left one on a tie), and none is kept where the word was attached to a
closing punctuation mark on its right ("task," -> ",") or an opening one on its left ("(task" -> "(").
Nothing else in the text changes.

Proposals (insert / replace)
----------------------------
The new words come from a *proposer*, which the perturbation code treats as a black box:

* any object with ``propose_many(slots: Sequence[MaskSlot]) -> list[str]`` (batched; see
  :class:`MaskedLMProposer`, :class:`CausalLMProposer`), or
* a plain callable ``propose(left_context_words, right_context_words) -> str``.

For batching, insertion and replacement are split into a plan and an application:
``plan = plan_insert_words(text, rng)`` draws the positions, ``plan.slots`` lists one
:class:`MaskSlot` per position (the exact text left and right of the masked position, computed on the
ORIGINAL text, so each position is filled independently of the others), and
``apply_plan(plan, proposals)`` splices the words in. :func:`propose_for_plans` fills many plans (of
many tasks) with ONE proposer call. A proposal that is not a single word (see :func:`is_single_word`)
leaves its position unchanged, so a bad proposer can only lower the number of edits.

Reference: the paper's authors' fork (jiashenggu/Tk-Instruct ``src/ni_dataset_perturb.py``) used
BERT word pieces and bert-base-multilingual-cased fill-mask with a fixed count of 10; it inserted a
repeated sentence right after its original and could pick the task itself in shuffle_instructions.
This module follows the paper's description ([5, 10] words; Table 3 examples) instead; see
``wobble.studies.instructions.conditions`` for the condition registry.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence, runtime_checkable

from wobble.seeding import derive_seed, make_rng  # noqa: F401 (re-used by conditions and splits)

K_MIN, K_MAX = 5, 10  # the paper's "[5,10] words"

_OPENERS = set("([{“‘\"'")
_CLOSERS = set(",.;:!?)]}”’\"'%")  # an apostrophe before a letter ("'s") is not a closer
_ALPHA_WORD_RE = re.compile(r"[^\W\d_]+")


# ------------------------------------------------------------------------------------ tokenization

WORD_RE = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")


@lru_cache(maxsize=1)
def _nlp():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """spaCy's English stop-word list (lower-case)."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def is_stop_word(word: str) -> bool:
    """True if ``word`` (case-insensitive) is a spaCy stop word, or all the pieces spaCy splits it into are."""
    sw = stop_words()
    low = word.lower()
    if low in sw:
        return True
    if not any(ch in "'’" for ch in low):
        return False
    pieces = [t.text for t in _nlp().tokenizer(low) if any(ch.isalnum() for ch in t.text)]
    return bool(pieces) and all(p in sw for p in pieces)


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the words of ``text`` (see :data:`WORD_RE`)."""
    return [m.span() for m in WORD_RE.finditer(text)]


def words(text: str) -> list[str]:
    """The words of ``text``, in order (see :data:`WORD_RE`)."""
    return WORD_RE.findall(text)


def sentences(text: str) -> list[str]:
    """Sentences of ``text`` by spaCy's rule-based sentencizer, stripped, empty ones dropped."""
    doc = _nlp()(text)
    return [s.text.strip() for s in doc.sents if s.text.strip()]


def is_single_word(s: str) -> bool:
    """True if ``s`` is exactly one word (a full match of :data:`WORD_RE`)."""
    return bool(s) and WORD_RE.fullmatch(s) is not None


# -------------------------------------------------------------------------------------- deletion

def _delete_span(text: str, start: int, end: int) -> str:
    """Remove ``text[start:end]`` (one word) and tidy the whitespace around it (module docstring)."""
    ls = start
    while ls > 0 and text[ls - 1].isspace():
        ls -= 1
    re_ = end
    while re_ < len(text) and text[re_].isspace():
        re_ += 1
    left_ws, right_ws = text[ls:start], text[end:re_]
    a = text[ls - 1] if ls > 0 else None
    b = text[re_] if re_ < len(text) else None
    if a is None:
        gap = left_ws          # keep any leading whitespace of the text
    elif b is None:
        gap = right_ws         # keep any trailing whitespace of the text
    elif not left_ws and not right_ws:
        gap = ""
    elif left_ws and right_ws:
        gap = right_ws if right_ws.count("\n") > left_ws.count("\n") else left_ws
    else:
        attached_closer = not right_ws and b in _CLOSERS and not (
            b in "'’" and re_ + 1 < len(text) and text[re_ + 1].isalnum())
        attached_opener = not left_ws and a in _OPENERS
        gap = "" if (attached_closer or attached_opener) else (left_ws or right_ws)
    return text[:ls] + gap + text[re_:]


def _delete_word_indices(text: str, spans: Sequence[tuple[int, int]], indices: Iterable[int]) -> str:
    for i in sorted(set(indices), reverse=True):  # right to left: earlier offsets stay valid
        s, e = spans[i]
        text = _delete_span(text, s, e)
    return text


def delete_stopwords(text: str) -> str:
    """Remove every word whose lower-case form is in spaCy's English ``STOP_WORDS``."""
    spans = word_spans(text)
    drop = [i for i, (s, e) in enumerate(spans) if is_stop_word(text[s:e])]
    return _delete_word_indices(text, spans, drop)


def _draw_k(rng: random.Random, available: int, k_min: int = K_MIN, k_max: int = K_MAX) -> int:
    k = rng.randint(k_min, k_max)  # always drawn, so the rng stream does not depend on the text length
    return max(0, min(k, available))


def delete_words(text: str, rng: random.Random, k_min: int = K_MIN, k_max: int = K_MAX) -> str:
    """Remove ``k = rng.randint(k_min, k_max)`` random words (at most ``len(words) - 1``)."""
    spans = word_spans(text)
    k = _draw_k(rng, len(spans) - 1, k_min, k_max)
    drop = rng.sample(range(len(spans)), k)
    return _delete_word_indices(text, spans, drop)


# ----------------------------------------------------------------------- insertion / replacement

@dataclass(frozen=True)
class MaskSlot:
    """One position to fill: the perturbed text would be ``left + WORD + right``.

    ``left`` / ``right`` are taken from the ORIGINAL text (other positions of the same plan are not
    applied). ``original`` is the word being replaced, or None for an insertion.
    """

    left: str
    right: str
    original: str | None = None

    @property
    def kind(self) -> str:
        return "insert" if self.original is None else "replace"

    @property
    def left_words(self) -> list[str]:
        return words(self.left)

    @property
    def right_words(self) -> list[str]:
        return words(self.right)

    def masked(self, mask_token: str) -> str:
        """The text with ``mask_token`` at this position (input of a masked LM)."""
        return self.left + mask_token + self.right


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    prefix: str = ""
    suffix: str = ""


@dataclass(frozen=True)
class EditPlan:
    """Positions drawn for :func:`insert_words` / :func:`replace_words` on ``text``; fill with :func:`apply_plan`."""

    text: str
    kind: str  # "insert" | "replace"
    edits: tuple[_Edit, ...] = field(default_factory=tuple)

    @property
    def slots(self) -> list[MaskSlot]:
        out = []
        for ed in self.edits:
            original = None if self.kind == "insert" else self.text[ed.start:ed.end]
            out.append(MaskSlot(self.text[:ed.start] + ed.prefix, ed.suffix + self.text[ed.end:], original))
        return out

    def __len__(self) -> int:
        return len(self.edits)


def insertion_slots(text: str) -> list[tuple[int, int, str, str]]:
    """All places a word may be inserted: before each word, and after the last word.

    Each is ``(start, end, prefix, suffix)`` with ``start == end``: the new text is
    ``text[:start] + prefix + WORD + suffix + text[end:]``.
    """
    spans = word_spans(text)
    slots = [(s, s, "", " ") for s, _ in spans]
    if spans:
        end = spans[-1][1]
        slots.append((end, end, " ", ""))
    return slots


def plan_insert_words(text: str, rng: random.Random, k_min: int = K_MIN, k_max: int = K_MAX) -> EditPlan:
    """Draw ``k = rng.randint(k_min, k_max)`` distinct insertion slots (fewer if the text has fewer)."""
    slots = insertion_slots(text)
    k = _draw_k(rng, len(slots), k_min, k_max)
    chosen = sorted(rng.sample(range(len(slots)), k))
    return EditPlan(text, "insert", tuple(_Edit(*slots[i]) for i in chosen))


def plan_replace_words(text: str, rng: random.Random, k_min: int = K_MIN, k_max: int = K_MAX) -> EditPlan:
    """Draw ``k = rng.randint(k_min, k_max)`` distinct replaceable words (fewer if the text has fewer)."""
    spans = word_spans(text)
    k = _draw_k(rng, len(spans), k_min, k_max)
    chosen = sorted(rng.sample(range(len(spans)), k))
    return EditPlan(text, "replace", tuple(_Edit(*spans[i]) for i in chosen))


def apply_plan(plan: EditPlan, proposals: Sequence[str]) -> str:
    """Splice ``proposals[i]`` into position ``i`` of ``plan``; a non-word proposal leaves it unchanged."""
    if len(proposals) != len(plan.edits):
        raise ValueError(f"plan has {len(plan.edits)} positions but {len(proposals)} proposals were given")
    text = plan.text
    for ed, word in sorted(zip(plan.edits, proposals), key=lambda p: p[0].start, reverse=True):
        word = (word or "").strip()
        if not is_single_word(word):
            continue
        text = text[:ed.start] + ed.prefix + word + ed.suffix + text[ed.end:]
    return text


# ---------------------------------------------------------------------------------------- proposers

@runtime_checkable
class Proposer(Protocol):
    def propose_many(self, slots: Sequence[MaskSlot]) -> list[str]:
        """One word per slot ("" when there is no usable proposal)."""
        ...


class CallableProposer:
    """Adapts ``propose(left_context_words, right_context_words) -> str`` to :class:`Proposer`."""

    def __init__(self, fn: Callable[[list[str], list[str]], str]):
        self.fn = fn

    def propose_many(self, slots: Sequence[MaskSlot]) -> list[str]:
        return [self.fn(s.left_words, s.right_words) for s in slots]


def as_proposer(proposer: Any) -> Proposer:
    """Accept a :class:`Proposer` or a two-argument callable."""
    if hasattr(proposer, "propose_many"):
        return proposer
    if callable(proposer):
        return CallableProposer(proposer)
    raise TypeError(f"a proposer needs propose_many(slots) or to be callable, got {type(proposer).__name__}")


def _same_word(a: str, b: str | None) -> bool:
    return b is not None and a.lower() == b.lower()


class MaskedLMProposer:
    """Fill each slot with a masked LM's best prediction that is a real word and not the original.

    ``model_name_or_path`` is loaded lazily with ``AutoTokenizer`` / ``AutoModelForMaskedLM`` on the
    first call (the paper used bert-base-multilingual-cased); a ready ``model`` and ``tokenizer`` may be
    passed instead. A "real word" is an alphabetic, word-initial vocabulary item (not a "##" piece, and a
    "▁"/"Ġ"-marked piece for SentencePiece/byte-BPE vocabularies) that :func:`is_single_word` accepts.
    Long texts are cut to a window of tokens around the mask.
    """

    def __init__(self, model_name_or_path: str | None = None, *, model=None, tokenizer=None, top_k: int = 50,
                 batch_size: int = 16, device: str | None = None, max_length: int | None = None):
        if model_name_or_path is None and (model is None or tokenizer is None):
            raise ValueError("MaskedLMProposer needs model_name_or_path or both model and tokenizer")
        self.model_name_or_path = model_name_or_path
        self._model, self._tok = model, tokenizer
        self.top_k, self.batch_size, self.device, self.max_length = top_k, batch_size, device, max_length
        self._marker: str | None = None
        self._affixes: tuple[list[int], list[int]] = ([], [])

    def _load(self):
        if self._model is None or self._tok is None:
            from transformers import AutoModelForMaskedLM, AutoTokenizer

            self._tok = self._tok or AutoTokenizer.from_pretrained(self.model_name_or_path)
            self._model = self._model or AutoModelForMaskedLM.from_pretrained(self.model_name_or_path)
        self._model.eval()
        if self.device:
            self._model.to(self.device)
        if self._marker is None:
            pieces = self._tok.convert_ids_to_tokens(self._tok("hello world", add_special_tokens=False)["input_ids"])
            self._marker = next((m for m in ("▁", "Ġ") if any(p.startswith(m) for p in pieces)), "")
            # the special tokens the tokenizer adds around a text ([CLS] ... [SEP], <s> ... </s>)
            plain = self._tok("hello", add_special_tokens=False)["input_ids"]
            full = self._tok("hello", add_special_tokens=True)["input_ids"]
            i = next((j for j in range(len(full) - len(plain) + 1) if full[j:j + len(plain)] == plain), 0)
            self._affixes = (full[:i], full[i + len(plain):])
        return self._model, self._tok

    def _window(self, ids: list[int], mask_pos: int, budget: int) -> list[int]:
        if len(ids) <= budget:
            return ids
        lo = max(0, min(mask_pos - budget // 2, len(ids) - budget))
        return ids[lo:lo + budget]

    def _candidate(self, raw: str, decoded: str, original: str | None) -> str | None:
        if raw.startswith("##"):
            return None
        if self._marker and not raw.startswith(self._marker):
            return None
        word = decoded.strip()
        if not word.isalpha() or _same_word(word, original) or not is_single_word(word):
            return None
        return word

    def propose_many(self, slots: Sequence[MaskSlot]) -> list[str]:
        if not slots:
            return []
        import torch

        model, tok = self._load()
        limits = [512, getattr(tok, "model_max_length", None), getattr(model.config, "max_position_embeddings", None)]
        max_len = self.max_length or min(x for x in limits if isinstance(x, int) and x > 0)
        head, tail = self._affixes
        budget = max_len - len(head) - len(tail)
        out: list[str] = []
        for b in range(0, len(slots), self.batch_size):
            batch = slots[b:b + self.batch_size]
            seqs, positions = [], []
            for slot in batch:
                ids = tok(slot.masked(tok.mask_token), add_special_tokens=False)["input_ids"]
                mask_pos = ids.index(tok.mask_token_id)
                ids = list(head) + self._window(ids, mask_pos, budget) + list(tail)
                seqs.append(ids)
                positions.append(ids.index(tok.mask_token_id))
            width = max(len(s) for s in seqs)
            pad = tok.pad_token_id if tok.pad_token_id is not None else 0
            input_ids = torch.tensor([s + [pad] * (width - len(s)) for s in seqs])
            attn = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs])
            device = next(model.parameters()).device
            with torch.no_grad():
                logits = model(input_ids=input_ids.to(device), attention_mask=attn.to(device)).logits
            for i, slot in enumerate(batch):
                top = torch.topk(logits[i, positions[i]], k=min(self.top_k, logits.shape[-1])).indices.tolist()
                chosen = ""
                for tid in top:
                    word = self._candidate(tok.convert_ids_to_tokens(tid), tok.decode([tid]), slot.original)
                    if word:
                        chosen = word
                        break
                out.append(chosen)
        return out


class CausalLMProposer:
    """Propose the next word after the left context with a :class:`wobble.backends.base.Backend`.

    Each slot becomes the prompt ``slot.left.rstrip()`` (or ``empty_context_prompt`` when the slot is at
    the start of the text); one batched ``backend.generate(prompts, params)`` call with greedy decoding
    of 3 new tokens; the proposal is the first alphabetic word of the output that differs from the word
    being replaced ("" if none).
    """

    def __init__(self, backend, params=None, empty_context_prompt: str = "Instruction:"):
        if params is None:
            from wobble.backends.base import GenParams

            params = GenParams(max_new_tokens=3, temperature=0.0)
        self.backend, self.params, self.empty_context_prompt = backend, params, empty_context_prompt

    def propose_many(self, slots: Sequence[MaskSlot]) -> list[str]:
        if not slots:
            return []
        prompts = [s.left.rstrip() or self.empty_context_prompt for s in slots]
        gens = self.backend.generate(prompts, self.params)
        out = []
        for slot, gen in zip(slots, gens):
            text = getattr(gen, "text", gen)
            word = next((w for w in _ALPHA_WORD_RE.findall(text or "")
                         if not _same_word(w, slot.original) and is_single_word(w)), "")
            out.append(word)
        return out


def propose_for_plans(plans: Sequence[EditPlan], proposer: Any) -> list[str]:
    """Fill all ``plans`` with ONE ``propose_many`` call; returns the perturbed texts in order."""
    p = as_proposer(proposer)
    slots = [slot for plan in plans for slot in plan.slots]
    proposals = p.propose_many(slots) if slots else []
    if len(proposals) != len(slots):
        raise ValueError(f"proposer returned {len(proposals)} words for {len(slots)} slots")
    out, i = [], 0
    for plan in plans:
        out.append(apply_plan(plan, proposals[i:i + len(plan)]))
        i += len(plan)
    return out


def insert_words(text: str, rng: random.Random, propose: Any, k_min: int = K_MIN, k_max: int = K_MAX) -> str:
    """Insert ``k = rng.randint(k_min, k_max)`` proposed words at random distinct slots."""
    return propose_for_plans([plan_insert_words(text, rng, k_min, k_max)], propose)[0]


def replace_words(text: str, rng: random.Random, propose: Any, k_min: int = K_MIN, k_max: int = K_MAX) -> str:
    """Replace ``k = rng.randint(k_min, k_max)`` random distinct words by proposals for their position."""
    return propose_for_plans([plan_replace_words(text, rng, k_min, k_max)], propose)[0]


# ------------------------------------------------------------------------------------ permutations

def _permute_differently(items: list, rng: random.Random, tries: int = 100) -> list:
    """A random permutation of ``items``; different from the input whenever two items differ."""
    perm = list(items)
    if len(set(items)) < 2:
        rng.shuffle(perm)
        return perm
    for _ in range(tries):
        rng.shuffle(perm)
        if perm != items:
            return perm
    return items[1:] + items[:1]  # a rotation always differs when two items differ


def shuffle_words(text: str, rng: random.Random) -> str:
    """Permute the whitespace-separated chunks (words with their attached punctuation)."""
    chunks = text.split()
    return " ".join(_permute_differently(chunks, rng))


def repeat_sentence(text: str, rng: random.Random) -> str:
    """Append a copy of one random sentence after the last sentence."""
    sents = sentences(text)
    if not sents:
        return text
    chosen = sents[rng.randrange(len(sents))]
    return text.rstrip() + " " + chosen


def shuffle_sentences(text: str, rng: random.Random) -> str:
    """Permute the sentences (a different order whenever possible), joined by single spaces."""
    sents = sentences(text)
    if len(sents) < 2:
        return text
    return " ".join(_permute_differently(sents, rng))


def pick_other_task(task: str, tasks: Iterable[str], rng: random.Random,
                    definitions_by_task: Mapping[str, str] | None = None) -> str:
    """A random task other than ``task`` (preferring one whose definition text differs)."""
    others = sorted(t for t in set(tasks) if t != task)
    if not others:
        raise ValueError(f"shuffle_instructions needs at least one task other than {task!r}")
    if definitions_by_task is not None and task in definitions_by_task:
        own = definitions_by_task[task].strip()
        differing = [t for t in others if definitions_by_task[t].strip() != own]
        others = differing or others
    return rng.choice(others)


def shuffle_instructions(task: str, definitions_by_task: Mapping[str, str], rng: random.Random) -> str:
    """The definition of a different, randomly chosen task of ``definitions_by_task``."""
    other = pick_other_task(task, definitions_by_task.keys(), rng, definitions_by_task)
    return definitions_by_task[other]


def cli_perturb(condition: str, text: str, seed: int = 1, task: str = "cli", *, proposer: Any = None,
                definitions_by_task: Mapping[str, str] | None = None,
                paraphrases: Mapping[str, Sequence[str]] | None = None) -> str:
    """``wobble perturb CONDITION --text T``: :func:`wobble.studies.instructions.conditions.apply_condition` on one
    text (task name ``task`` enters the seed). Conditions that need a proposer, a task pool or paraphrases
    fail with a :class:`~wobble.errors.WobbleError` unless those are given."""
    from wobble.errors import WobbleError
    from wobble.studies.instructions.conditions import apply_condition

    try:
        return apply_condition(condition, task, text, seed, definitions_by_task=definitions_by_task,
                               proposer=proposer, paraphrases=paraphrases)
    except (KeyError, ValueError) as e:
        raise WobbleError(str(e.args[0]) if e.args else str(e)) from None


__all__ = [
    "K_MIN", "K_MAX", "WORD_RE", "derive_seed", "make_rng", "words", "word_spans", "sentences", "stop_words",
    "is_stop_word",
    "is_single_word", "delete_stopwords", "delete_words", "MaskSlot", "EditPlan", "insertion_slots",
    "plan_insert_words", "plan_replace_words", "apply_plan", "Proposer", "CallableProposer", "as_proposer",
    "MaskedLMProposer", "CausalLMProposer", "propose_for_plans", "insert_words", "replace_words",
    "shuffle_words", "repeat_sentence", "shuffle_sentences", "pick_other_task", "shuffle_instructions",
    "cli_perturb",
]
