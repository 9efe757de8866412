"""Tables 1-11 of the ``instructions`` study (Gu et al. 2023), ours beside the paper's: the ``build_<table>``
functions :mod:`.spec` declares (``wobble.studies.instructions.tables:build_table4``), each
``build(inputs, context) -> Table``.

Each builder lives in the module of its kind of table, beside the helpers only it uses; the pieces they share
are in :mod:`.table_parts`:

==================  ============================  ==========================================================
tables              module                        what they show
==================  ============================  ==========================================================
1, 2, 3, 6          :mod:`.tables_text`           the paper's examples and categories beside our data and code
4, 5, 10, 11        :mod:`.tables_conditions`     every instruction condition x category, per setting
7                   :mod:`.tables_para`           Para-Instructions: the original vs the rephrased instructions
8, 9                :mod:`.tables_diverse`        DiversePrompt: the spread over a task's prompts, each prompt
==================  ============================  ==========================================================

The drop figure is in :mod:`.figures`.
"""

from __future__ import annotations

from wobble.studies.instructions.tables_conditions import build_table4, build_table5, build_table10, build_table11
from wobble.studies.instructions.tables_diverse import build_table8, build_table9
from wobble.studies.instructions.tables_para import build_table7
from wobble.studies.instructions.tables_text import build_table1, build_table2, build_table3, build_table6

__all__ = [
    "build_table1", "build_table2", "build_table3", "build_table4", "build_table5", "build_table6", "build_table7",
    "build_table8", "build_table9", "build_table10", "build_table11",
]
