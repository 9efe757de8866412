"""Instruction finetuning (Tk-Instruct recipe).

* :mod:`wobble.training.data` — (source, target) pairs -> tokenized seq2seq / causal examples, padding collator.
* :mod:`wobble.training.finetune` — ``FinetuneConfig`` and ``finetune(model, tokenizer, kind, pairs, out_dir, cfg)``.

Import from the submodules (``from wobble.training.finetune import finetune``): the package re-exports
nothing, so ``wobble.training.finetune`` stays the module (not shadowed by the function of the same name).
"""
