"""The prompt format of Si et al. (2023), §2.2 and §5.1.

The paper's formula for the instance template and verbalizer is lost from the text extraction; the
format below is the one in the authors' run script (NoviScl/AmbigPrompt ``run.py``):

* a demonstration is ``"{text}\\n\\n{label_prefix}{answer}\\n\\n"``; ``label_prefix`` is
  ``"Category:"`` in the baseline and ``"Source?"``, ``"Length?"``... with a semantic verbalizer
  (Table 6); ``answer`` is the label word ("1" / "0" by default) or, with explanations, the template
  explanation that ends in the label (Tables 9-10);
* an instruction (Tables 7-8) is prepended, followed by a blank line;
* the query is ``"{text}\\n\\n{label_prefix}"``: the label word is the next token.

The instruction and demonstrations (the part shared by every test item of a prompt set) are built
once per prompt set (:func:`shared_prefix`), so a backend can encode them once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

BASE_PREFIX = "Category:"
# Content-free inputs of contextual calibration (Zhao et al. 2021) as the authors apply it.
CONTENT_FREE = ("[MASK]", "N/A", "")


@dataclass(frozen=True)
class PromptStyle:
    """How one intervention renders a pair's prompts.

    ``label_words[v]`` is the word for label ``v`` (0 or 1); ``explanations[v]``, when set, replaces it
    in the demonstrations (the model then writes its own explanation and answer).
    """

    intervention: str
    target: str | None = None
    instruction: str = ""
    label_prefix: str = BASE_PREFIX
    label_words: tuple[str, str] = ("0", "1")
    explanations: tuple[str, str] | None = None
    disambig: bool = False
    notes: tuple[str, ...] = ()

    @property
    def generates(self) -> bool:
        """True when the answer must be generated (explanations) rather than read from label-word scores."""
        return self.explanations is not None

    def answer(self, label: int) -> str:
        """What a demonstration with ``label`` shows after the label prefix."""
        return self.explanations[label] if self.explanations is not None else self.label_words[label]


def demo_block(text: str, answer: str, label_prefix: str = BASE_PREFIX) -> str:
    """One demonstration: the instance, a blank line, the label prefix and the answer, a blank line."""
    return f"{text.strip()}\n\n{label_prefix}{answer.strip()}\n\n"


def query_block(text: str, label_prefix: str = BASE_PREFIX) -> str:
    """The test instance, ending where the label word is expected."""
    return f"{text.strip()}\n\n{label_prefix}"


def shared_prefix(style: PromptStyle, demos: Sequence[tuple[str, int]]) -> str:
    """Instruction (if any) and every demonstration ``(text, label)`` of a prompt set, in order."""
    head = f"{style.instruction}\n\n" if style.instruction else ""
    return head + "".join(demo_block(text, style.answer(label), style.label_prefix) for text, label in demos)


def build_prompt(prefix: str, text: str, style: PromptStyle) -> str:
    """The full prompt of one test item: the prompt set's shared prefix and the query."""
    return prefix + query_block(text, style.label_prefix)


def content_free_prompts(prefix: str, style: PromptStyle) -> list[str]:
    """The calibration prompts: the shared prefix with each content-free input as the query."""
    return [prefix + query_block(cf, style.label_prefix) for cf in CONTENT_FREE]

