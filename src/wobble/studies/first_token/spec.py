"""Study ``first_token`` declared once: Wang et al. 2024, *"My Answer is C"*.

(Being moved onto the shared study layer: outputs, context and checks are filled in by this study's module.)
"""

from __future__ import annotations

from wobble.report.spec import StudySpec

SPEC = StudySpec(
    name="first_token",
    paper='Wang et al. 2024, "My Answer is C": First-Token Probabilities Do Not Match Text Answers',
    sources=("opinionqa",),
    model_refs=(("models", "*"), ("judge_model",), ("classifier_base",)),
    outputs=(),
    context=lambda config: {},
)
