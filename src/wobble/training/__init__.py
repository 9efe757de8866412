"""Instruction finetuning (Tk-Instruct recipe).

* :mod:`wobble.training.config` — ``FinetuneConfig``, every knob of a run, and how N ranks split its batch.
* :mod:`wobble.training.data` — (source, target) pairs -> tokenized seq2seq / causal examples, the Trainer's
  ``datasets.Dataset``, padding collator.
* :mod:`wobble.training.finetune` — ``finetune(model, tokenizer, kind, pairs, out_dir, cfg)``: the Trainer run.
* :mod:`wobble.training.checkpoints` — where a killed run resumes, and when it must not.
* :mod:`wobble.training.distributed` — one process or one of N ranks, and what the ranks agree on.
* :mod:`wobble.training.to_dir` — a materialized model -> a finetuned model directory with its manifest.
* :mod:`wobble.training.launch` — a finetune job's processes: one, or N ranks started by torchrun.

Import from the submodules (``from wobble.training.finetune import finetune``): the package re-exports
nothing, so ``wobble.training.finetune`` stays the module (not shadowed by the function of the same name).
"""
