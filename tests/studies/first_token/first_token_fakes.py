"""The questions and the fake backend the first_token inference and classifier tests share: three questions of
OpinionQA's shape (the last option a refusal) and a backend that scores letter C highest."""

from __future__ import annotations

import json

from wobble.backends.base import Generation

Q1 = {"uid": "W1/Q1/0", "qkey": "Q1", "question": "Do you worry?", "options": ["A lot", "A little", "Not at all", "Refused"]}
Q2 = {"uid": "W1/Q2/1", "qkey": "Q2", "question": "Is it good?", "options": ["Good", "Bad", "Refused"]}
Q3 = {"uid": "W2/Q3/2", "qkey": "Q3", "question": "How often?", "options": ["Often", "Never", "Refused"]}


class FakeBackend:
    """Scores letter 'C' (or the last letter) highest; answers with a fixed text; records every call."""

    model_key = "fake"

    def __init__(self, text="C. answer"):
        self.text = text
        self.calls = []

    def next_token_logprobs(self, prompts, candidates):
        self.calls.append(("next_token_logprobs", len(prompts), tuple(candidates)))
        return [{c: (-0.1 if c == "C" else -1.0 - 0.1 * i) for i, c in enumerate(candidates)} for _ in prompts]

    def generate(self, prompts, params):
        self.calls.append(("generate", len(prompts), params.temperature))
        return [Generation(text=self.text, rendered_prompt=json.dumps(p)) for p in prompts]
