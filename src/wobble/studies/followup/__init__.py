"""Study ``followup``: *Ask Again, Then Fail: Large Language Models' Vacillations in Judgement* (ICLR 2024
submission). After the model's initial answer the same conversation goes on with a closed-ended,
open-ended or leading follow-up question (Direct Form: one of them; Progressive Form: all three in
order) and the answer is read after every round; metrics M. and M. Rate (Appendix A.1).

Modules: :mod:`.prompts` (benchmarks, paper prompt texts, messages), :mod:`.mechanism` ({MA} drawing,
dialogue plans, the next user turn), :mod:`.fewshot` (held-out demonstrations), :mod:`.extractors`
(answers per answer type), :mod:`.metrics` (M., M. Rate, Error Rate, E→R with bootstrap intervals).
"""
