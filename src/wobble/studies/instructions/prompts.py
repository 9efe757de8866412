r"""Tk-Instruct prompt encoding (the source string of ``DataCollatorForNI``, yizhongw/Tk-Instruct
``src/ni_collator.py``) for the two settings of Gu et al. 2023:

* ``INSTRU-WO-EXAM``: definition only (``n_pos=0``),
* ``INSTRU-W-EXAM``: definition + 2 positive examples (``n_pos=2``; the "def + pos" setting of
  ``tk-instruct-*-def-pos``). No negative examples, no explanations, no task name by default.

Exact layout (``\n`` = newline; note the leading space of `` Positive Example`` and `` Output:`` in
examples, and that the instance's ``Output: `` ends with one space)::

    [<task name>. ]Definition: <definition.strip()>[.]\n\n
     Positive Example 1 -\nInput: <input.strip()>[.]\n Output: <output.strip()>[.]\n\n
     Positive Example 2 -\nInput: <input.strip()>[.]\n Output: <output.strip()>[.]\n\n
    Now complete the following example -\nInput: <instance input.strip()>[.]\nOutput:

``[.]``: a full stop is appended when the text so far does not already end with an ASCII punctuation
character (``string.punctuation``); the check is on the composed string, so an empty field gets one
too ("Input: ."). For example::

    >>> encode_instance("Fix the sentence", [{"input": "he go", "output": "He goes."}], "she run", n_pos=1)
    'Definition: Fix the sentence.\n\n Positive Example 1 -\nInput: he go.\n Output: He goes.\n\nNow complete the following example -\nInput: she run.\nOutput: '

The collator keeps an example only while ``definition + " ".join(kept) + example + task_input`` fits in
``max_source_length`` tokens (then stops adding); pass ``fits`` (a predicate on that string) to
reproduce this. Truncating the final source to ``max_source_length`` tokens is not done here.
"""

from __future__ import annotations

import string
from typing import Callable, Mapping, Sequence

SETTINGS: dict[str, int] = {"INSTRU-WO-EXAM": 0, "INSTRU-W-EXAM": 2}
#: The workflow's setting keys (``{setting}`` wildcard) and the paper's names of them.
SETTING_LABELS: dict[str, str] = {"wo_exam": "INSTRU-WO-EXAM", "w_exam": "INSTRU-W-EXAM"}
_PUNCT = set(string.punctuation)


def _end_with_period(s: str) -> str:
    return s if s and s[-1] in _PUNCT else s + "."


def format_definition(definition: str | Sequence[str]) -> str:
    """``"Definition: <def>[.]\\n\\n"`` (a SuperNI ``Definition`` list uses its first element)."""
    if not isinstance(definition, str):
        definition = definition[0]
    return _end_with_period("Definition: " + definition.strip()) + "\n\n"


def format_positive_example(index: int, example: Mapping[str, str]) -> str:
    """One positive example, 1-based ``index``, without explanation."""
    s = f" Positive Example {index} -\n"
    s = _end_with_period(s + f"Input: {example['input'].strip()}") + "\n"
    s = _end_with_period(s + f" Output: {example['output'].strip()}") + "\n"
    return s + "\n"


def format_task_input(instance_input: str) -> str:
    """``"Now complete the following example -\\nInput: <input>[.]\\nOutput: "``."""
    s = "Now complete the following example -\n"
    s = _end_with_period(s + f"Input: {instance_input.strip()}") + "\n"
    return s + "Output: "


def encode_instance(definition: str | Sequence[str], pos_examples: Sequence[Mapping[str, str]], instance_input: str,
                    n_pos: int = 0, add_task_name: bool = False, task_name: str | None = None,
                    add_definition: bool = True, fits: Callable[[str], bool] | None = None) -> str:
    """The Tk-Instruct source string for one instance (layout in the module docstring).

    ``pos_examples``: dicts with ``input`` and ``output`` (SuperNI "Positive Examples"); the first
    ``n_pos`` are used. ``add_task_name`` prefixes ``task_name + ". "``. ``fits``: optional predicate
    reproducing the collator's length check for examples (see module docstring).
    """
    if n_pos < 0:
        raise ValueError(f"n_pos must be >= 0, got {n_pos}")
    if add_task_name and not task_name:
        raise ValueError("add_task_name=True needs task_name")
    task_input = format_task_input(instance_input)
    prefix = (task_name + ". ") if add_task_name else ""
    defn = format_definition(definition) if add_definition else ""
    kept: list[str] = []
    for i, ex in enumerate(list(pos_examples)[:n_pos], 1):
        ex_str = format_positive_example(i, ex)
        if fits is not None and not fits(defn + " ".join(kept) + ex_str + task_input):
            break
        kept.append(ex_str)
    return prefix + defn + "".join(kept) + task_input


def encode_for_setting(setting: str, definition: str | Sequence[str], pos_examples: Sequence[Mapping[str, str]],
                       instance_input: str, **kwargs) -> str:
    """:func:`encode_instance` with ``n_pos`` from the paper's setting name (``SETTINGS``)."""
    if setting not in SETTINGS:
        raise KeyError(f"unknown setting {setting!r}; expected one of {sorted(SETTINGS)}")
    return encode_instance(definition, pos_examples, instance_input, n_pos=SETTINGS[setting], **kwargs)


__all__ = ["SETTINGS", "SETTING_LABELS", "encode_instance", "encode_for_setting", "format_definition", "format_positive_example",
           "format_task_input"]


def plain_prompt(record: Mapping[str, str]) -> str:
    """The split record's Tk-Instruct prompt as plain text (the paper's T5 models, gemma + LoRA)."""
    return record["prompt"]


def as_chat_turn(record: Mapping[str, str]) -> list[dict]:
    """The same prompt as the single user turn of a chat (``instructions.chat_models``): an
    instruction-tuned chat model reads the definition, examples and input as its user's request and
    answers in the assistant turn its chat template opens; nothing is added to the paper's text."""
    from wobble.adapters.chat import message

    return [message("user", record["prompt"])]
