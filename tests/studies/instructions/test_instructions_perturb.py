"""Contracts of the instruction perturbations (perturb, insert_replace, proposers) and the condition registry
(wobble.studies.instructions.conditions)."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from pathlib import Path

import pytest

from wobble.backends.base import GenParams, Generation
from wobble.seeding import derive_seed, make_rng
from wobble.studies.instructions import conditions as C
from wobble.studies.instructions import insert_replace as IR
from wobble.studies.instructions import perturb as P
from wobble.studies.instructions import proposers as PR

PAPER = Path(__file__).resolve().parents[4] / "shared" / "paper" / "instructions"

# task1557's definition: paper Table 1 / Table 3 "original instruction".
TASK1557 = ("In this task, you will be shown an incorrect English sentence. "
            "You need to generate a corrected form of the input sentence.")
# Table 3 "delete stopwords" with the <del>...</del> spans removed.
TASK1557_NO_STOPWORDS = ("task, shown incorrect English sentence. need generate corrected form input sentence.")
# A longer realistic definition (SuperNI task200 style) with contractions, hyphens, brackets and newlines.
LONG = ("In this task, you're given a statement and three sentences as choices. Your job is to determine which "
        "sentence can be inferred from the statement. Incorrect choices change the meaning in important ways or "
        "have details that are not mentioned in the statement. Indicate your answer as 1, 2, or 3 corresponding "
        "to the choice number of the selected sentence (e.g. a key-value pair).\nDon't add anything else.")


def zebra(left_words, right_words):
    return "zebra"


def in_order_subsequence(sub, seq) -> bool:
    it = iter(seq)
    return all(any(x == y for y in it) for x in sub)


# ------------------------------------------------------------------------------------------ seeds

def test_derive_seed_is_stable_and_sensitive():
    a = derive_seed(0, "task1557", "delete_words")
    assert a == derive_seed(0, "task1557", "delete_words")
    assert 0 <= a < 2 ** 64
    # sha256 based, so the value is fixed across processes and platforms
    assert a == int.from_bytes(__import__("hashlib").sha256(b"0\x1ftask1557\x1fdelete_words").digest()[:8], "big")
    assert len({derive_seed(s, t, c) for s in (0, 1) for t in ("a", "b") for c in ("x", "y")}) == 8


def test_words_definition():
    assert P.words("you're given a key-value pair (e.g. <B-PER>), don't!") == [
        "you're", "given", "a", "key-value", "pair", "e", "g", "B-PER", "don't"]
    assert P.words("blank (_) 1,2, or 3") == ["blank", "1", "2", "or", "3"]


# ------------------------------------------------------------------------------------ word level

def test_delete_stopwords_matches_paper_table3():
    assert P.delete_stopwords(TASK1557) == TASK1557_NO_STOPWORDS
    if (PAPER / "table3.csv").exists():
        rows = {r["perturbation"]: r["example_instruction"] for r in csv.DictReader(io.StringIO((PAPER / "table3.csv").read_text()))}
        assert rows["original instruction"] == TASK1557
        kept = re.sub(r"<del>.*?</del>", "", rows["delete stopwords"])
        assert P.words(kept) == P.words(TASK1557_NO_STOPWORDS)


@pytest.mark.parametrize("text", [TASK1557, LONG])
def test_delete_stopwords_leaves_no_stop_word(text):
    out = P.delete_stopwords(text)
    assert not [w for w in P.words(out) if P.is_stop_word(w)]
    assert P.words(out) == [w for w in P.words(text) if not P.is_stop_word(w)]
    assert "you're" not in out and "Don't" not in out  # contractions of stop words go too


@pytest.mark.parametrize("text", [TASK1557, LONG])
def test_delete_words_removes_5_to_10_words_and_nothing_else(text):
    before = P.words(text)
    for seed in range(20):
        out = P.delete_words(text, make_rng(seed, "t", "delete_words"))
        after = P.words(out)
        assert 5 <= len(before) - len(after) <= 10
        assert in_order_subsequence(after, before)
        # punctuation is never deleted
        def punct(s):
            return Counter(ch for ch in s if not ch.isalnum() and not ch.isspace() and ch not in "'-")
        assert punct(out) == punct(text)


def test_delete_words_short_text_keeps_one_word():
    out = P.delete_words("Fix this now please.", make_rng(0, "t", "delete_words"))
    assert len(P.words(out)) == 1 and out.endswith(".")


def test_delete_whitespace_is_tidy():
    # attached comma stays attached to the previous word; newline survives
    assert P._delete_span("In this task, you", 8, 12) == "In this, you"
    assert P._delete_span("first word\nsecond", 6, 10) == "first\nsecond"
    assert P._delete_span("a (word) b", 3, 7) == "a () b"
    assert P._delete_span("first last", 6, 10) == "first"


def drawn_k(seed, key, available):
    """The k an insert/replace draws: the first draw of its rng, capped at the positions there are."""
    return min(make_rng(seed, "t", key).randint(5, 10), available)


@pytest.mark.parametrize("text", [TASK1557, LONG])
def test_insert_words_adds_exactly_k_words_in_order(text):
    for seed in range(20):
        out = IR.insert_words(text, make_rng(seed, "t", "insert_words"), zebra)
        before, after = P.words(text), P.words(out)
        k = len(after) - len(before)
        assert k == drawn_k(seed, "insert_words", len(before) + 1) and 5 <= k <= 10
        assert after.count("zebra") == k
        assert [w for w in after if w != "zebra"] == before
        # nothing else changes: removing the inserted words (with their one space) gives the original back
        assert out.replace("zebra ", "").replace(" zebra", "") == text


@pytest.mark.parametrize("text", [TASK1557, LONG])
def test_replace_words_replaces_exactly_k_words(text):
    def skeleton(s):
        return P.WORD_RE.sub("W", s)
    for seed in range(20):
        out = IR.replace_words(text, make_rng(seed, "t", "replace_words"), zebra)
        before, after = P.words(text), P.words(out)
        assert len(after) == len(before) and skeleton(out) == skeleton(text)
        changed = [(a, b) for a, b in zip(before, after) if a != b]
        assert all(b == "zebra" for _, b in changed)
        assert after.count("zebra") == drawn_k(seed, "replace_words", len(before))


def flaky(left, right):
    """Rejected proposals at every other position: not a word, two words, the left or the right neighbour."""
    n = len(left)
    return ["zebra", "", "zebra", "two words", "zebra", ",", "zebra", (left or [""])[-1], "zebra",
            (right or [""])[0]][n % 10]


@pytest.mark.parametrize("key", ["insert_words", "replace_words"])
def test_rejected_proposals_are_redrawn_until_k_apply(key):
    fill = IR.insert_words if key == "insert_words" else IR.replace_words
    for seed in range(20):
        out = fill(LONG, make_rng(seed, "t", key), flaky)
        n = len(P.words(LONG)) + (key == "insert_words")
        assert P.words(out).count("zebra") == drawn_k(seed, key, n)
    # nothing acceptable anywhere: every position is tried once, the text stays as it is
    calls = []

    def echo_left(left, right):
        calls.append(1)
        return (left or right)[-1 if left else 0]

    assert fill(TASK1557, make_rng(0, "t", key), echo_left) == TASK1557
    assert len(calls) == len(P.words(TASK1557)) + (key == "insert_words")


def test_a_proposal_equal_to_a_neighbour_is_rejected():
    plan = IR.plan_replace_words("alpha beta gamma delta", make_rng(0), 1, 1)
    i = 0
    slot = plan.slot(i)
    assert slot.neighbours == [w for w in ("alpha", "beta", "gamma", "delta")
                               if w in slot.left_words[-1:] + slot.right_words[:1]]
    for n in slot.neighbours:
        assert not IR.acceptable(plan, i, n.upper(), {})  # ignoring case
    assert not IR.acceptable(plan, i, slot.original, {}) and not IR.acceptable(plan, i, "two words", {})
    assert IR.acceptable(plan, i, "zebra", {})
    # a neighbour already replaced by "zebra": "zebra" next to it is rejected too
    here = plan.order[i].index
    j = next(j for j, ed in enumerate(plan.order) if abs(ed.index - here) == 1)
    assert not IR.acceptable(plan, i, "zebra", {j: "zebra"})
    assert IR.apply_words(plan, {i: "zebra"}).split().count("zebra") == 1


def test_proposer_sees_the_original_context():
    seen = []

    def record(left, right):
        seen.append((left, right))
        return "zebra"

    text_words = P.words(TASK1557)
    IR.insert_words(TASK1557, make_rng(1, "t", "i"), record)
    assert seen and all(left + right == text_words for left, right in seen)
    plan = IR.plan_replace_words(TASK1557, make_rng(1, "t", "r"))
    for slot in plan.slots:
        assert slot.left_words + [slot.original] + slot.right_words == text_words
        assert slot.masked("[MASK]").count("[MASK]") == 1


@pytest.mark.parametrize("text", [TASK1557, LONG])
def test_shuffle_words_keeps_the_multiset(text):
    out = P.shuffle_words(text, make_rng(0, "t", "shuffle_words"))
    assert sorted(P.words(out)) == sorted(P.words(text))
    assert P.words(out) != P.words(text)


# -------------------------------------------------------------------------------- sentence level

def test_repeat_sentence_puts_the_copy_right_after_its_original():
    sents = P.sentences(LONG)
    assert len(sents) == 5
    chosen = set()
    for seed in range(20):
        out = P.repeat_sentence(LONG, make_rng(seed, "t", "repeat_sentences"))
        i = make_rng(seed, "t", "repeat_sentences").randrange(5)  # the sentence the rng picks
        assert P.sentences(out) == sents[:i + 1] + [sents[i]] + sents[i + 1:]
        assert out == " ".join(sents[:i + 1] + [sents[i]] + sents[i + 1:])  # joined by one space, as the fork
        chosen.add(i)
    assert len(chosen) > 1
    # paper Table 3: the last sentence of task1557 repeated (the copy right after it = at the end)
    two = P.sentences(TASK1557)
    assert any(P.repeat_sentence(TASK1557, make_rng(s, "t", "r")) == TASK1557 + " " + two[1] for s in range(10))
    # the first sentence repeated goes between the two, not at the end
    assert any(P.repeat_sentence(TASK1557, make_rng(s, "t", "r")) == " ".join([two[0], two[0], two[1]])
               for s in range(10))


def test_shuffle_sentences_keeps_the_sentences():
    out = P.shuffle_sentences(TASK1557, make_rng(0, "t", "shuffle_sentences"))
    a, b = P.sentences(TASK1557)
    assert out == f"{b} {a}"  # Table 3: two sentences can only be swapped
    for seed in range(10):
        out = P.shuffle_sentences(LONG, make_rng(seed, "t", "shuffle_sentences"))
        assert sorted(P.sentences(out)) == sorted(P.sentences(LONG)) and P.sentences(out) != P.sentences(LONG)
    assert P.shuffle_sentences("Only one sentence here.", make_rng(0)) == "Only one sentence here."


# ----------------------------------------------------------------------------- instruction level

def test_shuffle_instructions_picks_another_task():
    pool = {"t1": "Def one.", "t2": "Def two.", "t3": "Def three.", "t4": "Def one."}
    got = set()
    for seed in range(30):
        out = P.shuffle_instructions("t1", pool, make_rng(seed, "t1", "shuffle_instructions"))
        assert out in ("Def two.", "Def three.")  # never its own task, nor a copy of its own text
        got.add(out)
    assert got == {"Def two.", "Def three."}
    with pytest.raises(ValueError):
        P.shuffle_instructions("t1", {"t1": "x"}, make_rng(0))


# ---------------------------------------------------------------------------------- determinism

@pytest.mark.parametrize("key", ["delete_words", "insert_words", "replace_words", "shuffle_words"])
def test_same_seed_same_text_different_seed_different_text(key):
    kw = {"proposer": zebra}
    a = C.apply_condition(key, "task1557", TASK1557, 0, **kw)
    assert a == C.apply_condition(key, "task1557", TASK1557, 0, **kw)
    assert a != TASK1557
    assert a != C.apply_condition(key, "task1557", TASK1557, 1, **kw)
    assert a != C.apply_condition(key, "task1558", TASK1557, 0, **kw)  # the task name enters the seed


@pytest.mark.parametrize("key", ["repeat_sentences", "shuffle_sentences"])
def test_sentence_conditions_vary_with_seed(key):
    outs = {C.apply_condition(key, "t", LONG, s) for s in range(5)}
    assert len(outs) > 1
    assert C.apply_condition(key, "t", LONG, 3) == C.apply_condition(key, "t", LONG, 3)


# --------------------------------------------------------------------------------------- registry

def test_condition_keys_match_the_paper_tables():
    expected = [("original", "original instruction"), ("delete_stopwords", "delete stopwords"),
                ("delete_words", "delete [5,10] words"), ("insert_words", "insert [5,10] words"),
                ("replace_words", "replace [5,10] words"), ("shuffle_words", "shuffle words"),
                ("repeat_sentences", "repeat sentences"), ("shuffle_sentences", "shuffle sentences"),
                ("shuffle_instructions", "shuffle instructions")]
    assert [(c.key, c.label) for c in C.PAPER_CONDITIONS] == expected
    if (PAPER / "table4.csv").exists():
        seen = []
        for r in csv.DictReader(io.StringIO((PAPER / "table4.csv").read_text())):
            pair = (r["condition"], r["condition_label"])
            if pair not in seen:
                seen.append(pair)
            cond = C.get_condition(r["condition"])
            assert cond.paper_level == r["perturbation_level"]
        assert seen == expected
    assert [c.key for c in C.PARAPHRASE_CONDITIONS] == ["paraphrase_1", "paraphrase_2", "paraphrase_3"]
    assert C.get_condition("diverse_prompt_12").variant == 12
    assert {c.level for c in C.CONDITIONS} == {"original", "word", "sentence", "instruction", "paraphrase",
                                              "diverse_prompt"}
    with pytest.raises(KeyError):
        C.get_condition("delete_everything")


def test_apply_condition_simple_cases():
    assert C.apply_condition("original", "t", TASK1557, 0) == TASK1557
    assert C.apply_condition("delete_stopwords", "t", TASK1557, 5) == TASK1557_NO_STOPWORDS
    paras = {"t": ["New one.", "New two.", "New three."]}
    assert C.apply_condition("paraphrase_2", "t", TASK1557, 0, paraphrases=paras) == "New two."
    assert C.apply_condition("diverse_prompt_1", "t", TASK1557, 0, paraphrases=paras) == "New one."
    pool = {"t": TASK1557, "u": "Other task."}
    assert C.apply_condition("shuffle_instructions", "t", TASK1557, 0, definitions_by_task=pool) == "Other task."
    with pytest.raises(ValueError):
        C.apply_condition("insert_words", "t", TASK1557, 0)
    with pytest.raises(ValueError):
        C.apply_condition("shuffle_instructions", "t", TASK1557, 0)
    with pytest.raises(KeyError):
        C.apply_condition("diverse_prompt_4", "t", TASK1557, 0, paraphrases=paras)


class CountingProposer:
    def __init__(self):
        self.calls = 0

    def propose_many(self, slots):
        self.calls += 1
        return [f"w{len(s.left_words)}x" for s in slots]


class FlakyProposer(CountingProposer):
    def propose_many(self, slots):
        self.calls += 1
        return [flaky(s.left_words, s.right_words) for s in slots]


def test_batch_is_one_proposer_call_per_round_and_equals_single_calls():
    defs = {"a": TASK1557, "b": LONG, "c": "Short text with a few words only here."}
    for key in ("insert_words", "replace_words"):
        prop = CountingProposer()
        batch = C.apply_condition_batch(key, defs, 7, proposer=prop)
        assert prop.calls == 1  # every proposal acceptable: one round
        for task, d in defs.items():
            assert batch[task] == C.apply_condition(key, task, d, 7, proposer=CountingProposer())
        prop = FlakyProposer()
        batch = C.apply_condition_batch(key, defs, 7, proposer=prop)
        singles = [FlakyProposer() for _ in defs]
        for (task, d), single in zip(defs.items(), singles):
            assert batch[task] == C.apply_condition(key, task, d, 7, proposer=single)
        assert prop.calls == max(p.calls for p in singles) > 1  # redraw rounds are shared by all tasks


# -------------------------------------------------------------------------------------- proposers

class FakeBackend:
    model_key = "fake"

    def __init__(self, outputs):
        self.outputs, self.calls = outputs, []

    def generate(self, prompts, params):
        self.calls.append((list(prompts), params))
        return [Generation(text=self.outputs[i % len(self.outputs)], rendered_prompt=p) for i, p in enumerate(prompts)]


def test_causal_lm_proposer_takes_first_alphabetic_word():
    backend = FakeBackend([" 12, Task is", " the input", "!!"])
    prop = PR.CausalLMProposer(backend)
    slots = [IR.MaskSlot("In this ", " task", None), IR.MaskSlot("", " this task", "the"),
             IR.MaskSlot("In this ", ", you", None)]
    # numbers/punctuation are skipped, and so are a neighbour ("Task" before "task") and the word being
    # replaced ("the"); no word at all -> ""
    assert prop.propose_many(slots) == ["is", "input", ""]
    (prompts, params), = backend.calls
    assert prompts == ["In this", "Instruction:", "In this"]  # left context; a fixed prompt at the text start
    assert params == GenParams(max_new_tokens=3, temperature=0.0)
    out = IR.insert_words(TASK1557, make_rng(0), PR.CausalLMProposer(FakeBackend([" maybe"])))
    assert 5 <= P.words(out).count("maybe") <= 10


def test_masked_lm_proposer_with_a_tiny_bert(tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", ".", "##s", "in", "this", "task", "you",
             "will", "be", "shown", "an", "incorrect", "english", "sentence", "need", "to", "generate", "a",
             "corrected", "form", "of", "the", "input", "zebra", "42"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = transformers.BertTokenizer(str(tmp_path / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=32, max_position_embeddings=64)
    model = transformers.BertForMaskedLM(cfg)
    prop = PR.MaskedLMProposer(model=model, tokenizer=tok, top_k=len(vocab), batch_size=2)
    plan = IR.plan_replace_words(TASK1557, make_rng(0))
    words = prop.propose_many(plan.slots)
    assert len(words) == len(plan)
    for w, slot in zip(words, plan.slots):
        assert w.isalpha() and w in vocab and w.lower() != slot.original.lower()
    assert words == prop.propose_many(plan.slots)  # deterministic
    out = IR.fill_plans([plan], prop)[0]
    assert len(P.words(out)) == len(P.words(TASK1557)) and out != TASK1557
    # a very long context is cut to a window around the mask instead of failing
    long_slot = IR.MaskSlot("this task " * 100, " the input" * 100, None)
    assert prop.propose_many([long_slot])[0].isalpha()


def test_cli_perturb():
    from wobble.errors import WobbleError

    assert C.cli_perturb("delete_stopwords", TASK1557) == TASK1557_NO_STOPWORDS
    assert C.cli_perturb("shuffle_words", TASK1557, seed=3) == C.apply_condition("shuffle_words", "cli", TASK1557, 3)
    with pytest.raises(WobbleError):
        C.cli_perturb("insert_words", TASK1557)  # no proposer
    with pytest.raises(WobbleError):
        C.cli_perturb("no_such_condition", TASK1557)
