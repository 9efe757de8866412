"""Prepare: turn acquired source folders into one normalized JSONL file per dataset.

``DATASETS[key]`` names the sources a dataset reads and gives a ``records(source_dirs)`` generator;
``prepare(key, source_dirs, out_path)`` writes the records with :func:`wobble.io.write_jsonl` (atomic,
sorted keys, deterministic order: re-running on the same sources gives byte-identical output).
``source_dirs`` maps each source key to its acquired folder (the mirror layout of that source, e.g.
``<mirror>/superni`` or the output folder of ``acquire``).

The record schema of each dataset is documented in the docstring of its loader module
(``Dataset.module``): superni, para_instructions, diverse_prompt, robustness, opinionqa, ambigprompt,
icl_raw, followup. Every loader validates every record and raises :class:`wobble.errors.DataError`
naming file, record and expectation; nothing is silently dropped.

``affected_tables(missing_sources)`` lists the paper tables that a run cannot reproduce fully when
those sources are left out.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from wobble.data import ambigprompt, diverse_prompt, followup, icl_raw, opinionqa, para_instructions, robustness, superni
from wobble.data.sources import SOURCES, get_source, table_sort_key
from wobble.errors import SourceUnavailable, WobbleError
from wobble.io import write_jsonl

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Dataset:
    """A normalized dataset: its key, the sources it reads and how to produce its records."""

    key: str
    sources: tuple[str, ...]
    loader: Callable[..., Iterator[dict]]
    module: str
    description: str

    def records(self, source_dirs: Mapping[str, str | os.PathLike]) -> Iterator[dict]:
        """Yield the normalized records, reading ``source_dirs[<source>]`` for each of ``self.sources``."""
        missing = [s for s in self.sources if s not in source_dirs or source_dirs[s] in (None, "")]
        if missing:
            raise SourceUnavailable(f"dataset '{self.key}' needs source(s) {', '.join(missing)}; "
                                    f"given: {', '.join(sorted(source_dirs)) or 'none'}")
        dirs = [Path(source_dirs[s]) for s in self.sources]
        for s, d in zip(self.sources, dirs):
            if not d.is_dir():
                raise SourceUnavailable(f"dataset '{self.key}': folder {d} for source '{s}' does not exist")
        return self.loader(*dirs)


def _ds(key, sources, loader, module, description) -> Dataset:
    return Dataset(key, tuple(sources), loader, module.__name__, description)


DATASETS: dict[str, Dataset] = {d.key: d for d in [
    _ds("superni_test", ["superni"], superni.load_test_instances, superni,
        "every instance of the 119 English + 35 non-English SuperNI test tasks"),
    _ds("superni_tasks", ["superni"], superni.load_test_tasks, superni,
        "one record per SuperNI test task (154), with definition, examples, counts and data status"),
    _ds("superni_train", ["superni"], superni.load_train_instances, superni,
        "instances of the mirrored SuperNI train tasks"),
    _ds("para_instructions", ["para_instructions"], para_instructions.load_para, para_instructions,
        "23 tasks with original and 3 paraphrased definitions"),
    _ds("diverse_prompt", ["diverse_prompt"], diverse_prompt.load_tasks, diverse_prompt,
        "24 Instruction-Induction tasks with their prompts and eval examples"),
    _ds("robustness_tk_results", ["robustness_tk_results"], robustness.load_results, robustness,
        "the fork's released per-category results, tidy"),
    _ds("opinionqa_414", ["opinionqa"], opinionqa.load_subset_414, opinionqa,
        "the 414 OpinionQA questions of 'My Answer is C'"),
    _ds("opinionqa_annotated", ["opinionqa"], opinionqa.load_annotated, opinionqa,
        "human-labelled model responses (classifier training data)"),
    _ds("opinionqa_paper_mapping", ["opinionqa"], opinionqa.load_paper_mapping, opinionqa,
        "the paper's released mismatch/refusal statistics per constraint, model and shuffle"),
    _ds("ambigprompt", ["ambigprompt"], ambigprompt.load_examples, ambigprompt,
        "demos and test items of the 7 mirrored underspecified pairs"),
    _ds("ambigprompt_features", ["ambigprompt"], ambigprompt.load_features, ambigprompt,
        "the 22 dataset/feature pairs: label words, verbalizers, status"),
    _ds("imdb", ["icl_imdb"], icl_raw.load_imdb, icl_raw, "IMDb review pool"),
    _ds("yelp", ["icl_yelp"], icl_raw.load_yelp, icl_raw, "Yelp review pool"),
    _ds("mnli_genre", ["icl_mnli"], icl_raw.load_mnli, icl_raw, "MNLI pairs with genre"),
    *[_ds(k, [k], fn, followup, f"{k} questions with gold answers") for k, fn in followup.LOADERS.items()],
]}

#: dataset key -> the source keys it reads.
DATASET_SOURCES: dict[str, tuple[str, ...]] = {k: d.sources for k, d in DATASETS.items()}


def get_dataset(key: str) -> Dataset:
    try:
        return DATASETS[key]
    except KeyError:
        raise WobbleError(f"unknown dataset '{key}'; known datasets: {', '.join(DATASETS)}") from None


def prepare(dataset_key: str, source_dirs: Mapping[str, str | os.PathLike], out_path: str | os.PathLike) -> int:
    """Write the normalized JSONL of ``dataset_key`` to ``out_path`` atomically; return the record count."""
    ds = get_dataset(dataset_key)
    n = write_jsonl(out_path, ds.records(source_dirs))
    log.info("dataset %s: %d records from %s -> %s", dataset_key, n,
             ", ".join(f"{s}={source_dirs[s]}" for s in ds.sources), out_path)
    return n


def affected_datasets(missing_sources: Iterable[str]) -> list[str]:
    """Datasets that read any of ``missing_sources``."""
    missing = {get_source(s).key for s in missing_sources}
    return [k for k, srcs in DATASET_SOURCES.items() if missing & set(srcs)]


def affected_tables(missing_sources: Iterable[str]) -> list[str]:
    """Paper tables/figures (``"<study>/table<N>"``) fed by any of ``missing_sources``, in study order."""
    tables = {t for s in missing_sources for t in get_source(s).tables}
    return sorted(tables, key=table_sort_key)


def _check_registry() -> None:
    for key, ds in DATASETS.items():
        unknown = [s for s in ds.sources if s not in SOURCES]
        if unknown:
            raise WobbleError(f"dataset '{key}' reads unknown source(s) {unknown}")


_check_registry()
