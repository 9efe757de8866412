"""OpinionQA loaders for "My Answer is C" (source ``opinionqa``).

Datasets:

``opinionqa_414`` (subset_414.jsonl, checked against subset_414_ids.txt; 414 rows, file order):

* ``uid`` (str): ``"<wave>/<qkey>/<info_csv_row>"`` (unique; ``qkey`` alone is not).
* ``qkey`` (str), ``wave`` (str, e.g. ``"American_Trends_Panel_W26"``), ``question`` (str).
* ``options`` (list[str]): the answer options in OpinionQA order, ``"Refused"`` included (last).
* ``refusal_option`` (str): ``"Refused"``.
* ``option_ordinal`` (list[float]): ordinal values of the ordered options (not "Refused", nor e.g.
  "Not sure"), as in OpinionQA.
* ``option_mapping`` (dict str->str): Pew code -> option text (``"99.0"`` -> ``"Refused"``).
* ``classifier_split`` (str): ``"train"`` / ``"test"`` (the paper's 331/83 response-classifier split).
* ``options_as_listed`` (list[str]): the shuffled option list as stored in MCQ-Mismatch.
* ``idx`` (int): position in the 414 list.

``opinionqa_annotated`` (annotated_responses/<model>/<split>.jsonl; one record per labelled response,
models in sorted order, train before test, file order; 1,733 records):

* ``model`` (str, the folder name, e.g. ``"llama2-7b"``), ``split`` (``"train"``/``"test"``),
  ``row`` (int, 0-based index of the line in the file).
* ``question_text`` (str): the OpinionQA question (``original_question``).
* ``options_as_shown`` (list[str]): the options in letter order (A, B, ...) exactly as the prompt
  listed them. Parsed from the prompt, because the stored ``references`` list is NOT the shown order
  for the mixtral and mistral-7b files; the parsed list must be a permutation of ``references``.
* ``references`` (list[str]): the stored ``references`` list, verbatim.
* ``prompt`` (str): ``shuffle_0.question`` (the full user prompt); ``response`` (str): the raw decoded
  text, chat template included.
* ``label_raw`` (str): the human annotation as stored.
* ``label_kind`` (str): ``"single"`` (one option, ``"C. Rarely"``, ``"D: A fair amount"`` or ``"C"``),
  ``"multiple"`` (several letters run together, ``"CD"``, ``"ACE"``), ``"nan"`` (the string "nan":
  no option could be assigned).
* ``label_letters`` (list[str]): the labelled letters in the order written; ``[]`` for ``"nan"``.
* ``label_format`` (str): ``"letter_dot_text"``, ``"letter_colon_text"``, ``"letter"``, ``"letters"`` or ``"nan"``.
* ``label_text`` (str | None): the option text written in the label (stripped), if any.
* ``label_option`` (str | None): for a single label, the shown option of its letter.
* ``label_text_matches`` (bool | None): whether ``label_text`` agrees with ``label_option`` (exactly,
  or one is a prefix of the other: some option texts were cut in the source). One known mismatch
  (mixtral train row 86: "A. Minor reason" where A is "Major reason"); the letter is kept as the label.
* ``label_is_refusal`` (bool): a single label whose option is ``"Refused"``.
* ``refusal_letter`` (str | None): the letter of ``"Refused"`` among the shown options.
* ``first_token_choice_letter`` (str | None): ``shuffle_0.choice_letter`` (first-token argmax).

``opinionqa_paper_mapping`` (paper_mapping_results/<Constraint>/<Model>/mapping_result.json; 24 files
x 10 shuffles): ``constraint`` (e.g. ``"High Constraint"``), ``model`` (e.g. ``"Llama2-7b-Chat"``),
``shuffle`` (int 0-9), ``total``, ``total_refuse``, ``refuse_rate``, ``total_mis``, ``total_mis_rate``,
``same_but_not_first``, ``total_first_token_mismatch`` (numbers as released).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from wobble.data._util import expect, get, load_json, read_lines, str_list
from wobble.errors import DataError
from wobble.io import iter_jsonl

REFUSED = "Refused"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_OPTION_LINE = re.compile(r"^([A-Z])\. (.*?) ?$")
_LABEL_DOT = re.compile(r"^([A-Z])\.\s+(.+)$", re.S)
_LABEL_COLON = re.compile(r"^([A-Z]):\s+(.+)$", re.S)
_LABEL_LETTERS = re.compile(r"^[A-Z]{2,}$")
MAPPING_KEYS = ("total", "total_refuse", "refuse_rate", "total_mis", "total_mis_rate", "same_but_not_first",
                "total_first_token_mismatch")


def load_subset_414(src: Path) -> Iterator[dict]:
    src = Path(src)
    path = src / "subset_414.jsonl"
    ids = read_lines(src / "subset_414_ids.txt", "the uids of the 414 questions")
    seen: set[str] = set()
    n = 0
    for lineno, obj in iter_jsonl(_need(path)):
        rec = f"line {lineno}"
        uid = get(path, rec, obj, "uid", str)
        expect(uid not in seen, path, rec, f"a unique uid, {uid!r} repeats")
        seen.add(uid)
        expect(n < len(ids) and ids[n] == uid, path, rec,
               f"uid {ids[n] if n < len(ids) else '(none)'} (line {n + 1} of subset_414_ids.txt), got {uid!r}")
        options = str_list(path, rec, obj, "options")
        expect(REFUSED in options, path, rec, f"an options list that includes {REFUSED!r}")
        ordinal = get(path, rec, obj, "option_ordinal", list, expected="a list of numbers",
                      check=lambda v: all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v))
        # ordinals cover the ordered options only ("Not sure" and "Refused" have none)
        expect(1 <= len(ordinal) <= len(options) - 1, path, rec,
               f"between 1 and {len(options) - 1} ordinal values (one per ordered option), got {len(ordinal)}")
        mapping = get(path, rec, obj, "option_mapping", dict)
        expect(sorted(mapping.values()) == sorted(options), path, rec, "option_mapping values = options")
        listed = str_list(path, rec, obj, "mcq_mismatch_options_as_listed")
        expect(sorted(listed) == sorted(options), path, rec, "mcq_mismatch_options_as_listed a permutation of options")
        split = get(path, rec, obj, "mcq_mismatch_classifier_split", str, check=lambda v: v in ("train", "test"),
                    expected="'train' or 'test'")
        yield {"uid": uid, "qkey": get(path, rec, obj, "qkey", str), "wave": get(path, rec, obj, "wave", str),
               "question": get(path, rec, obj, "question", str), "options": options, "refusal_option": REFUSED,
               "option_ordinal": ordinal, "option_mapping": mapping, "classifier_split": split,
               "options_as_listed": listed, "idx": get(path, rec, obj, "idx", int)}
        n += 1
    expect(n == len(ids), path, "(end of file)", f"{len(ids)} rows (one per uid in subset_414_ids.txt), got {n}")


def parse_shown_options(prompt: str, path, record) -> list[str]:
    """The options block of an MCQ-Mismatch prompt ("A. text \\nB. text \\n...Answer:") in letter order."""
    head, sep, _ = prompt.rpartition("\nAnswer:")
    expect(bool(sep), path, record, "a prompt ending with an 'Answer:' line")
    block = head.rsplit("\n\n", 1)
    expect(len(block) == 2, path, record, "a blank line between the question and the options")
    options = []
    for i, line in enumerate(block[1].split("\n")):
        m = _OPTION_LINE.match(line)
        expect(bool(m) and m.group(1) == LETTERS[i], path, record,
               f"option line '{LETTERS[i]}. <text>' in the prompt, got {line!r:.60}")
        options.append(m.group(2))
    expect(len(options) >= 2, path, record, "at least two options in the prompt")
    return options


def parse_label(label: str, options: list[str], path, record) -> dict[str, Any]:
    """Classify an annotation (see ``label_*`` fields in the module docstring); unparseable -> DataError."""
    raw = label
    label = label.strip()

    def letter_ok(letter: str) -> None:
        expect(letter in LETTERS[: len(options)], path, record,
               f"a label letter among {LETTERS[: len(options)]} (the {len(options)} shown options), got {raw!r}")

    if label == "nan":
        return {"label_kind": "nan", "label_letters": [], "label_format": "nan", "label_text": None}
    for pattern, fmt in ((_LABEL_DOT, "letter_dot_text"), (_LABEL_COLON, "letter_colon_text")):
        m = pattern.match(label)
        if m:
            letter_ok(m.group(1))
            return {"label_kind": "single", "label_letters": [m.group(1)], "label_format": fmt,
                    "label_text": m.group(2).strip()}
    if len(label) == 1 and label in LETTERS:
        letter_ok(label)
        return {"label_kind": "single", "label_letters": [label], "label_format": "letter", "label_text": None}
    if _LABEL_LETTERS.match(label):
        letters = list(label)
        for letter in letters:
            letter_ok(letter)
        expect(len(set(letters)) == len(letters), path, record, f"distinct letters in a multi-option label, got {raw!r}")
        return {"label_kind": "multiple", "label_letters": letters, "label_format": "letters", "label_text": None}
    raise DataError(path, record, "a label 'X. option', 'X: option', 'X', several letters like 'CD', "
                                  f"or 'nan'; got {raw!r}")


def _text_matches(text: str | None, option: str | None) -> bool | None:
    if text is None or option is None:
        return None
    a, b = text.strip(), option.strip()
    return a == b or a.startswith(b) or b.startswith(a)


def load_annotated(src: Path) -> Iterator[dict]:
    src = Path(src)
    root = src / "annotated_responses"
    if not root.is_dir():
        raise DataError(root, "(folder)", "annotated_responses/<model>/<split>.jsonl files: the folder is missing")
    models = sorted(p.name for p in root.iterdir() if p.is_dir())
    expect(bool(models), root, "(folder)", "at least one model folder")
    for model in models:
        files = [root / model / f"{split}.jsonl" for split in ("train", "test")]
        unknown = sorted(p.name for p in (root / model).iterdir() if p.is_file() and p not in files)
        expect(not unknown, root / model, unknown[0] if unknown else "", "only train.jsonl and test.jsonl")
        for path in files:
            if not path.is_file():
                continue
            split = path.stem
            for lineno, obj in iter_jsonl(path):
                yield _annotated_record(path, lineno, obj, model, split)


def _annotated_record(path: Path, lineno: int, obj: dict, model: str, split: str) -> dict:
    rec = f"line {lineno}"
    refs = str_list(path, rec, obj, "references")
    s0 = get(path, rec, obj, "shuffle_0", dict, expected="an object with the labelled response")
    rec0 = f"line {lineno} shuffle_0"
    prompt = get(path, rec0, s0, "question", str)
    shown = parse_shown_options(prompt, path, rec0)
    expect(sorted(shown) == sorted(refs), path, rec0,
           f"the prompt's options to be a permutation of references {refs!r:.100}, got {shown!r:.100}")
    label_raw = get(path, rec0, s0, "label", str, expected="the annotation string")
    lab = parse_label(label_raw, shown, path, f"{rec0} label")
    option = shown[LETTERS.index(lab["label_letters"][0])] if lab["label_kind"] == "single" else None
    choice = s0.get("choice_letter")
    return {"model": model, "split": split, "row": lineno - 1,
            "question_text": get(path, rec, obj, "original_question", str), "options_as_shown": shown,
            "references": refs, "prompt": prompt, "response": get(path, rec0, s0, "response", str),
            "label_raw": label_raw, **lab, "label_option": option,
            "label_text_matches": _text_matches(lab["label_text"], option),
            "label_is_refusal": option == REFUSED,
            "refusal_letter": LETTERS[shown.index(REFUSED)] if REFUSED in shown else None,
            "first_token_choice_letter": choice if isinstance(choice, str) else None}


def load_paper_mapping(src: Path) -> Iterator[dict]:
    root = Path(src) / "paper_mapping_results"
    files = sorted(root.glob("*/*/mapping_result.json"))
    expect(bool(files), root, "(folder)", "<Constraint>/<Model>/mapping_result.json files")
    for path in files:
        data = load_json(path, "a mapping_result.json")
        expect(isinstance(data, dict) and bool(data), path, "(top level)", "an object keyed shuffle_0..shuffle_9")
        keys = sorted(data, key=lambda k: int(k.split("_")[1]) if re.fullmatch(r"shuffle_\d+", k) else -1)
        for key in keys:
            expect(re.fullmatch(r"shuffle_\d+", key) is not None, path, key, "keys like 'shuffle_<n>'")
            stats = data[key]
            row = {"constraint": path.parent.parent.name.replace("_", " "), "model": path.parent.name,
                   "shuffle": int(key.split("_")[1])}
            for k in MAPPING_KEYS:
                row[k] = get(path, key, stats, k, (int, float))
            yield row


def _need(path: Path) -> Path:
    if not path.is_file():
        raise DataError(path, "(file)", "the OpinionQA file: it is missing")
    return path
