"""The data layer: pinned sources (``sources``), acquisition (``acquire``) and normalized datasets (``prepare``).

    from wobble.data import SOURCES, DATASETS, acquire, prepare, affected_tables
    entries = acquire("gsm8k", "resources/data/gsm8k", mirror="../shared/data")
    prepare("gsm8k", {"gsm8k": "resources/data/gsm8k"}, "resources/prepared/gsm8k.jsonl")
"""

from wobble.data.acquire import ChecksumMismatch, acquire
from wobble.data.prepare import DATASET_SOURCES, DATASETS, Dataset, affected_datasets, affected_tables, prepare
from wobble.data.sources import SOURCES, Pin, Source, pins_for

__all__ = ["SOURCES", "Source", "Pin", "pins_for", "acquire", "ChecksumMismatch", "DATASETS", "DATASET_SOURCES",
           "Dataset", "prepare", "affected_tables", "affected_datasets"]
