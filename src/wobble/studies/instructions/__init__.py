"""The ``instructions`` study (Gu et al. 2023): definition perturbations, conditions, Tk-Instruct prompts.

* :mod:`wobble.studies.instructions.perturb` - seeded word/sentence/instruction-level perturbations.
* :mod:`wobble.studies.instructions.conditions` - the condition registry and ``apply_condition``.
* :mod:`wobble.studies.instructions.prompts` - the Tk-Instruct source encoding (INSTRU-WO-EXAM / INSTRU-W-EXAM).
"""

from wobble.studies.instructions.conditions import (
    CONDITION_KEYS,
    CONDITIONS,
    PAPER_CONDITIONS,
    Condition,
    apply_condition,
    apply_condition_batch,
    get_condition,
)
from wobble.studies.instructions.perturb import CausalLMProposer, MaskedLMProposer, derive_seed
from wobble.studies.instructions.prompts import SETTINGS, encode_for_setting, encode_instance

__all__ = [
    "CONDITIONS", "CONDITION_KEYS", "PAPER_CONDITIONS", "Condition", "apply_condition", "apply_condition_batch",
    "get_condition", "CausalLMProposer", "MaskedLMProposer", "derive_seed", "SETTINGS", "encode_instance",
    "encode_for_setting",
]
