"""The pinned data sources of the four studies.

A *source* is one folder of the offline mirror (``../shared/data``, see its README.md and MANIFEST.tsv)
and the upstream repository (or repositories) its files came from. ``SOURCES[key]`` says where the
folder lives in the mirror, which upstream repository and commit it was taken from, which studies use
it, which paper tables it feeds, and the license.

Every file of a source is pinned in ``pins.tsv`` (next to this module, rebuilt from a mirror with
``python -m wobble.data.pin <mirror_dir>``). A pin records the file's path relative to the source
folder, the sha256 and size of the mirror bytes, the upstream repo / commit / path, the raw URL at
that commit (empty when no upstream file holds those bytes, e.g. a curated sample), whether the mirror
bytes are identical to the upstream file, whether the file is optional, and, for files that are a
documented trim of an upstream file (SuperNI tasks cut to the first N instances, AmbigPrompt demo
lists cut to 1000), the trim to apply to the download.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from wobble.errors import DataError, WobbleError

STUDIES = ("instructions", "first_token", "icl_bias", "followup")

PINS_FILE = "pins.tsv"
PIN_COLUMNS = ("source", "relpath", "sha256", "size", "repo", "commit", "upstream_path", "url",
               "identical", "optional", "trim", "note")


def raw_url(repo: str, commit: str, path: str) -> str:
    """The raw.githubusercontent.com URL of ``path`` in ``repo`` at ``commit`` (spaces escaped)."""
    from urllib.parse import quote
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{quote(path)}"


def _tables(study: str, *numbers: int, figures: tuple[int, ...] = ()) -> tuple[str, ...]:
    return tuple(f"{study}/table{n}" for n in numbers) + tuple(f"{study}/figure{n}" for n in figures)


@dataclass(frozen=True)
class Source:
    """One mirror folder and its provenance.

    ``upstreams``: (repo, commit) pairs, the primary one first (single files may come from another
    listed pair; each file's own repo/commit is in its :class:`Pin`). ``tables``: ids
    ``"<study>/table<N>"`` / ``"<study>/figure<N>"`` of the paper tables this source feeds (the CSVs in
    ``../shared/paper/<study>/``).
    """

    key: str
    mirror_subdir: str
    upstreams: tuple[tuple[str, str], ...]
    studies: tuple[str, ...]
    tables: tuple[str, ...]
    license: str
    description: str

    @property
    def repo(self) -> str:
        return self.upstreams[0][0]

    @property
    def commit(self) -> str:
        return self.upstreams[0][1]

    @property
    def tables_text(self) -> str:
        """E.g. ``"instructions: tables 4, 5, 10, 11"`` (one clause per study)."""
        return describe_tables(self.tables)

    @property
    def pins(self) -> list["Pin"]:
        return pins_for(self.key)

    @property
    def files(self) -> tuple[str, ...]:
        """Relative paths of the pinned files (the mirror folder's layout)."""
        return tuple(p.relpath for p in pins_for(self.key))


@dataclass(frozen=True)
class Pin:
    """One pinned file of a source (a row of pins.tsv)."""

    source: str
    relpath: str
    sha256: str
    size: int
    repo: str
    commit: str
    upstream_path: str
    url: str
    identical: bool
    optional: bool
    trim: dict | None = field(default=None, hash=False, compare=False)
    note: str = ""

    def to_row(self) -> dict[str, str]:
        return {
            "source": self.source, "relpath": self.relpath, "sha256": self.sha256, "size": str(self.size),
            "repo": self.repo, "commit": self.commit, "upstream_path": self.upstream_path, "url": self.url,
            "identical": "true" if self.identical else "false", "optional": "true" if self.optional else "false",
            "trim": json.dumps(self.trim, sort_keys=True, ensure_ascii=False) if self.trim else "",
            "note": self.note,
        }


_NI = "allenai/natural-instructions"
_TK_FORK = ("jiashenggu/Tk-Instruct", "1bac1f22c2f5f6cd15ab0f4c96e3c7705e66d9e1")
_ZS_COT = ("kojima-takeshi188/zero_shot_cot", "5ef330fcdeec0cd26aee27943504f91f8ec1c33c")
_ZS_COT_LICENSE = "none stated in repo"

_INSTR_ALL = _tables("instructions", 1, 2, 3, 4, 5, 7, 8, 9, 10, 11)
_FOLLOWUP_ALL = _tables("followup", 2, 8, 9, 10, 11, 12, 13, figures=(3, 4))
# StrategyQA, CoinFlip and MultiArith are the datasets of the temperature, E->R, mitigation and
# extra-model tables (3, 5, 6, 14, 16, 19, 20).
_FOLLOWUP_TRIO = _FOLLOWUP_ALL + _tables("followup", 3, 5, 6, 14, 16, 19, 20)


def _source(key, subdir, upstreams, studies, tables, license, description) -> Source:
    return Source(key, subdir, tuple(upstreams), tuple(studies), tuple(tables), license, description)


SOURCES: dict[str, Source] = {s.key: s for s in [
    _source("superni", "superni",
            [(_NI, "ae457ac40dafe0cd3dcd1370f0a29da54f33df4a"), (_NI, "e0fd31052b21acea5bd95fb00253e1ee1f5d8259"),
             (_NI, "b00871c954282e35d14de77c546918ee8b9d90da"), (_NI, "9f4706643a9e3888bf607bddfd624a06de081283"),
             (_NI, "d82b17a92071928131d230eaa9ddd4170fca8934"), _TK_FORK],
            ["instructions"], _INSTR_ALL,
            "Apache-2.0 task text; instances under each task's 'Instance License' field; "
            "tasks_partial/ from jiashenggu/Tk-Instruct (MIT)",
            "Super-NaturalInstructions v2 splits, test categories and (partial) task files"),
    _source("para_instructions", "para_instructions", [_TK_FORK], ["instructions"],
            _tables("instructions", 6, 7), "repo MIT (LICENSE, (c) 2022 Yizhong Wang)",
            "Para-Instructions: 23 SuperNI test tasks with 3 human paraphrases of the definition"),
    _source("diverse_prompt", "diverse_prompt",
            [("orhonovich/instruction-induction", "f7304ae0a35239c9819a08f93fd58426f6b4e4c1")],
            ["instructions"], _tables("instructions", 8, 9), "Apache-2.0",
            "DiversePrompt (Instruction Induction): 24 tasks, 186 prompts, eval examples"),
    _source("robustness_tk_results", "robustness_tk_results", [_TK_FORK], ["instructions"],
            _tables("instructions", 4, 10), "repo MIT (LICENSE, (c) 2022 Yizhong Wang)",
            "per-category results released in the Robustness authors' fork (reference numbers)"),
    _source("opinionqa", "opinionqa",
            [("tatsu-lab/opinions_qa", "ed8c4e0ac1a48c77e041db58d877eb3d0d949d65"),
             ("mainlp/MCQ-Mismatch", "b41aa0f2f59e7269590e262beb8d31e6becf1710")],
            ["first_token"], _tables("first_token", 2, 3, 4, 5, figures=(2, 3, 7)),
            "none stated in either repo; questions derive from Pew Research Center ATP surveys (Pew terms of use)",
            "OpinionQA questions, the 414-question subset of 'My Answer is C' and its annotated responses"),
    _source("ambigprompt", "ambigprompt",
            [("NoviScl/AmbigPrompt", "40dbb0466cfda2d435728c8a4da4da386e6a2381")],
            ["icl_bias"], _tables("icl_bias", 2, 3, 4, 5),
            "none stated in repo (upstream: BoolQ CC BY-SA 3.0; CivilComments CC0; MultiNLI OANC/CC BY-SA mix)",
            "underspecified-demonstration splits, 7 of the 22 dataset/feature pairs"),
    _source("icl_imdb", "icl_raw/imdb",
            [("PVidyadhar/Detection-of-Fraud-apps-using-Sentiment-Analysis", "81406d56e9c006de30f9d50737fd66177a4a1434")],
            ["icl_bias"], _tables("icl_bias", 2, 4, 5),
            "none stated in repo; aclImdb (Maas et al. 2011) distributed for research use",
            "IMDb reviews sampled from aclImdb v1.0 for the sa_sentiment_* pairs"),
    _source("icl_yelp", "icl_raw/yelp", [("AI-secure/aug-pe", "a3f292f6fec7427b6a6e6d982b83b68c1f0a86d5")],
            ["icl_bias"], _tables("icl_bias", 2, 4, 5),
            "repo Apache-2.0; review text under Yelp Open Dataset terms (non-commercial academic)",
            "Yelp reviews with stars for the sa_sentiment_* pairs"),
    _source("icl_mnli", "icl_raw/mnli", [("ZhengxiangShi/PowerfulPromptFT", "b4ecdea060847115e9909b442ab4eb15bcb2a2c4")],
            ["icl_bias"], _tables("icl_bias", 2, 3, 4, 5), "repo MIT; MultiNLI OANC / CC BY-SA 3.0 mix",
            "480 MultiNLI train pairs with genre (LM-BFF k-shot files) for the genre pairs"),
    _source("gsm8k", "followup/gsm8k", [_ZS_COT], ["followup"], _FOLLOWUP_ALL,
            f"{_ZS_COT_LICENSE} (GSM8K: MIT)", "GSM8K test set (1319)"),
    _source("svamp", "followup/svamp", [_ZS_COT], ["followup"], _FOLLOWUP_ALL,
            f"{_ZS_COT_LICENSE} (SVAMP: MIT)", "SVAMP (1000)"),
    _source("multiarith", "followup/multiarith", [_ZS_COT], ["followup"], _FOLLOWUP_TRIO,
            f"{_ZS_COT_LICENSE} (MultiArith: unspecified)", "MultiArith (600)"),
    _source("csqa", "followup/csqa", [_ZS_COT], ["followup"], _FOLLOWUP_ALL,
            f"{_ZS_COT_LICENSE} (CommonsenseQA: unspecified)", "CommonsenseQA dev_rand_split (1221)"),
    _source("strategyqa", "followup/strategyqa", [_ZS_COT], ["followup"], _FOLLOWUP_TRIO,
            f"{_ZS_COT_LICENSE} (StrategyQA: MIT / BIG-bench Apache-2.0)", "StrategyQA BIG-bench task (2290)"),
    _source("last_letters", "followup/last_letters", [_ZS_COT], ["followup"], _FOLLOWUP_ALL,
            _ZS_COT_LICENSE, "last-letter concatenation (500)"),
    _source("coin_flip", "followup/coin_flip", [_ZS_COT], ["followup"], _FOLLOWUP_TRIO,
            _ZS_COT_LICENSE, "coin flip (500)"),
    _source("mmlu", "followup/mmlu",
            [("stanford-cs336/spring2024-assignment5-alignment", "fcbfe2b3b72cb9e5536b93ba12265d04b8ca4cca")],
            ["followup"], _FOLLOWUP_ALL, "none stated in repo; MMLU itself MIT (hendrycks/test LICENSE)",
            "MMLU stratified 500-question test sample + 5-shot dev (285)"),
]}


def describe_tables(tables) -> str:
    """``("instructions/table4", "instructions/table5", "first_token/figure2")`` ->
    ``"instructions: tables 4, 5; first_token: figure 2"``."""
    by_study: dict[str, dict[str, list[int]]] = {}
    for t in tables:
        study, name = t.split("/", 1)
        kind = "figure" if name.startswith("figure") else "table"
        by_study.setdefault(study, {}).setdefault(kind, []).append(int(name[len(kind):]))
    parts = []
    for study in sorted(by_study, key=lambda s: (STUDIES.index(s) if s in STUDIES else 99, s)):
        chunks = []
        for kind in ("table", "figure"):
            nums = sorted(set(by_study[study].get(kind, [])))
            if nums:
                chunks.append(f"{kind}{'s' if len(nums) > 1 else ''} {', '.join(map(str, nums))}")
        parts.append(f"{study}: {'; '.join(chunks)}")
    return "; ".join(parts)


def table_sort_key(table_id: str) -> tuple:
    study, name = table_id.split("/", 1)
    kind = "figure" if name.startswith("figure") else "table"
    return (STUDIES.index(study) if study in STUDIES else 99, study, kind != "table", int(name[len(kind):]))


def get_source(key: str) -> Source:
    try:
        return SOURCES[key]
    except KeyError:
        raise WobbleError(f"unknown data source '{key}'; known sources: {', '.join(SOURCES)}") from None


def pins_path() -> Path:
    return Path(str(resources.files("wobble.data").joinpath(PINS_FILE)))


def parse_pins(path: str | Path) -> list[Pin]:
    """Read a pins.tsv file; a malformed row is a DataError naming the line."""
    from wobble.data._util import read_tsv

    pins = []
    for lineno, row in read_tsv(path, columns=PIN_COLUMNS):
        rec = f"line {lineno}"
        if row["source"] not in SOURCES:
            raise DataError(path, rec, f"a source among {sorted(SOURCES)}, got {row['source']!r}")
        if len(row["sha256"]) != 64:
            raise DataError(path, rec, f"a 64-hex sha256, got {row['sha256']!r}")
        for col in ("identical", "optional"):
            if row[col] not in ("true", "false"):
                raise DataError(path, rec, f"'{col}' true or false, got {row[col]!r}")
        try:
            trim = json.loads(row["trim"]) if row["trim"] else None
            size = int(row["size"])
        except ValueError as e:
            raise DataError(path, rec, f"an integer size and a JSON trim spec ({e})") from None
        pins.append(Pin(row["source"], row["relpath"], row["sha256"], size, row["repo"], row["commit"],
                        row["upstream_path"], row["url"], row["identical"] == "true", row["optional"] == "true",
                        trim, row["note"]))
    return pins


@functools.lru_cache(maxsize=1)
def load_pins() -> dict[str, tuple[Pin, ...]]:
    """All pins from the packaged pins.tsv, grouped by source key (each group sorted by relpath)."""
    grouped: dict[str, list[Pin]] = {k: [] for k in SOURCES}
    for pin in parse_pins(pins_path()):
        grouped[pin.source].append(pin)
    return {k: tuple(sorted(v, key=lambda p: p.relpath)) for k, v in grouped.items()}


def pins_for(source_key: str) -> list[Pin]:
    get_source(source_key)
    return list(load_pins()[source_key])


def source_summary(source_key: str) -> dict[str, Any]:
    """A JSON-able description of a source (for logs and provenance)."""
    s = get_source(source_key)
    pins = pins_for(source_key)
    return {"source": s.key, "mirror_subdir": s.mirror_subdir, "repo": s.repo, "commit": s.commit,
            "studies": list(s.studies), "tables": s.tables_text, "license": s.license,
            "files": len(pins), "files_with_url": sum(1 for p in pins if p.url),
            "files_identical_upstream": sum(1 for p in pins if p.identical)}
