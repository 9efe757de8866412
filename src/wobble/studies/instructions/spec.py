"""Study ``instructions`` declared once: Gu et al. 2023, *Robustness of Learning from Task Instructions*.

(Being moved onto the shared study layer: outputs, context and checks are filled in by this study's module.)
"""

from __future__ import annotations

from wobble.report.spec import StudySpec

SPEC = StudySpec(
    name="instructions",
    paper="Gu et al. 2023, Robustness of Learning from Task Instructions",
    sources=("superni", "para_instructions", "diverse_prompt"),
    model_refs=(("model",), ("second_model",), ("proposer_model",)),
    outputs=(),
    context=lambda config: {},
)
