"""The ``instructions`` study (Gu et al. 2023, *Robustness of Learning from Task Instructions*).

* :mod:`~wobble.studies.instructions.spec` - the study declared once (tables, figure, context, checks).
* :mod:`~wobble.studies.instructions.runs` - which runs it makes, their paths, each rule's params.
* :mod:`~wobble.studies.instructions.perturb` / :mod:`~wobble.studies.instructions.proposers` - seeded
  word/sentence/instruction-level perturbations and the word proposers of insert/replace.
* :mod:`~wobble.studies.instructions.conditions` - the condition registry and ``apply_condition``.
* :mod:`~wobble.studies.instructions.prompts` - the Tk-Instruct source encoding (INSTRU-WO-EXAM / INSTRU-W-EXAM).
* :mod:`~wobble.studies.instructions.splits` / :mod:`~wobble.studies.instructions.pipeline` - task selection,
  splits, training pairs, scoring.
* ``table_parts``, ``tables_text``, ``tables_conditions``, ``tables_para``, ``tables_diverse``,
  ``figure_drop`` - the build functions of Tables 1-11 and the drop figure.
"""
