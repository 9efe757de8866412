"""Rebuild ``pins.tsv`` from an offline mirror: ``python -m wobble.data.pin <mirror_dir> [--out F] [--check]``.

For every file under each source's mirror folder this records its sha256 and size and, following the
provenance in the mirror's MANIFEST.tsv and READMEs, the upstream repo, commit and path it came from,
the raw URL at that commit when an upstream file holds those bytes (or a documented trim of them),
whether the bytes are identical to upstream, and whether the file is optional (documentation, or a
convenience copy the loaders do not read). A file that no rule below accounts for is an error, so a
new file in the mirror must be given a provenance rule here before it can be pinned.

``--check`` compares the rebuilt pins with the packaged pins.tsv and exits 1 if they differ.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from wobble.data._util import read_tsv
from wobble.data.sources import PIN_COLUMNS, SOURCES, Pin, parse_pins, pins_path, raw_url
from wobble.errors import DataError, WobbleError
from wobble.io import atomic_write, sha256_file

NI = "allenai/natural-instructions"
NI_SPLIT_COMMITS = {
    "splits/default/test_tasks.txt": "b00871c954282e35d14de77c546918ee8b9d90da",
    "splits/default/train_tasks.txt": "9f4706643a9e3888bf607bddfd624a06de081283",
    "splits/xlingual/test_tasks.txt": "d82b17a92071928131d230eaa9ddd4170fca8934",
}
TK_FORK = ("jiashenggu/Tk-Instruct", "1bac1f22c2f5f6cd15ab0f4c96e3c7705e66d9e1")
MCQ = ("mainlp/MCQ-Mismatch", "b41aa0f2f59e7269590e262beb8d31e6becf1710")
OPINIONS_QA = ("tatsu-lab/opinions_qa", "ed8c4e0ac1a48c77e041db58d877eb3d0d949d65")
FOLLOWUP_ORIGINALS = {
    "gsm8k": ("test.jsonl", "dataset/grade-school-math/test.jsonl"),
    "svamp": ("SVAMP.json", "dataset/SVAMP/SVAMP.json"),
    "multiarith": ("MultiArith.json", "dataset/MultiArith/MultiArith.json"),
    "csqa": ("dev_rand_split.jsonl", "dataset/CommonsenseQA/dev_rand_split.jsonl"),
    "strategyqa": ("task.json", "dataset/StrategyQA/task.json"),
    "last_letters": ("last_letters.json", "dataset/last_letters/last_letters.json"),
    "coin_flip": ("coin_flip.json", "dataset/coin_flip/coin_flip.json"),
}
#: Serialisations tried when recording how a trimmed JSON file was re-written.
JSON_STYLES = (
    {"indent": 4, "ensure_ascii": False},
    {"indent": 4, "ensure_ascii": True},
    {"indent": None, "ensure_ascii": False},
    {"indent": None, "ensure_ascii": True},
    {"indent": 2, "ensure_ascii": False},
)


def json_style(path: Path) -> dict[str, Any] | None:
    """The json.dumps settings (+ trailing newline) that reproduce ``path`` exactly from its content."""
    text = path.read_text(encoding="utf-8")
    obj = json.loads(text)
    for style in JSON_STYLES:
        out = json.dumps(obj, **style)
        for nl in (False, True):
            if out + ("\n" if nl else "") == text:
                return {**style, "trailing_newline": nl}
    return None


def _derived(repo_commit, origin: str, note: str, optional: bool = False) -> dict[str, Any]:
    repo, commit = repo_commit if repo_commit else ("", "")
    return {"repo": repo, "commit": commit, "upstream_path": origin, "identical": False, "url_ok": False,
            "optional": optional, "trim": None, "note": note}


def _upstream(repo: str, commit: str, path: str, identical: bool = True, trim=None, note: str = "") -> dict[str, Any]:
    return {"repo": repo, "commit": commit, "upstream_path": path, "identical": identical, "url_ok": True,
            "optional": False, "trim": trim, "note": note}


class _SuperNI:
    """Per-task facts (coverage.tsv, the full-file commits) needed by the SuperNI rules."""

    def __init__(self, src_dir: Path):
        self.coverage = {row["task"]: (ln, row) for ln, row in read_tsv(src_dir / "coverage.tsv", required=(
            "task", "split", "status", "n_instances_in_mirror", "source_commit", "transcription_note"))}
        commits_file = Path(__file__).with_name("superni_full_commits.tsv")
        self.full_commits = {row["task"]: row["commit"] for _, row in read_tsv(commits_file, columns=("task", "commit"))}
        self.src_dir = src_dir

    def task_rule(self, relpath: str) -> dict[str, Any]:
        path = self.src_dir / relpath
        task = path.stem
        if task not in self.coverage:
            raise DataError(self.src_dir / "coverage.tsv", task, f"a coverage row for mirrored file {relpath}")
        _, row = self.coverage[task]
        status, note = row["status"], row["transcription_note"]
        if status == "full":
            commit = self.full_commits.get(task)
            if not commit:
                raise DataError(Path(__file__).with_name("superni_full_commits.tsv"), task,
                                "the upstream commit of this fully mirrored task file")
        elif status == "truncated":
            commit = row["source_commit"]
        else:
            raise DataError(self.src_dir / "coverage.tsv", task, f"status full or truncated for {relpath}, got {status!r}")
        data = json.loads(path.read_text(encoding="utf-8"))
        n = len(data.get("Instances", []))
        if str(n) != row["n_instances_in_mirror"]:
            raise DataError(self.src_dir / "coverage.tsv", task,
                            f"n_instances_in_mirror {row['n_instances_in_mirror']} = instances in {relpath} ({n})")
        trim: dict[str, Any] = {"op": "superni_instances", "keep": n, "json": json_style(path)}
        if status == "truncated":
            trim["drop_fields"] = ["Instance License"]
        if "Definition str normalized" in note:
            trim["definition_to_list"] = True
        if "doubled comma" in note:
            trim["repair_double_comma"] = True
        what = "first %d instances" % n if status == "full" else \
            "truncated transcription: first %d instances, no Instance License" % n
        return _upstream(NI, commit, f"tasks/{task}.json", identical=False, trim=trim,
                         note=what + (f"; {note}" if note else ""))

    def partial_rule(self, relpath: str) -> dict[str, Any]:
        task = Path(relpath).stem
        has_full = (self.src_dir / "tasks" / f"{task}.json").is_file()
        return _derived(TK_FORK, "tmp/tasks.csv", "built from the fork's Sep-2022 tasks.csv extraction"
                        + ("; superseded by tasks/ (not read by the loaders)" if has_full else ""), optional=has_full)


def rule_for(source_key: str, relpath: str, src_dir: Path, ctx: dict) -> dict[str, Any]:
    """Provenance of one mirror file (see the module docstring); raises WobbleError for unknown files."""
    name = relpath.rsplit("/", 1)[-1]
    if name == "README.md":
        return _derived(None, "", "documentation written for the mirror", optional=True)
    if source_key == "superni":
        sn = ctx.setdefault("superni", _SuperNI(src_dir))
        if relpath in NI_SPLIT_COMMITS:
            return _upstream(NI, NI_SPLIT_COMMITS[relpath], relpath)
        if relpath in ("test_categories.tsv", "coverage.tsv"):
            return _derived(None, "", "table built for the mirror from the splits, task files and tasks.csv")
        if relpath.startswith("tasks/") and relpath.endswith(".json") and relpath.count("/") == 1:
            return sn.task_rule(relpath)
        if relpath.startswith("tasks_partial/") and relpath.endswith(".json") and relpath.count("/") == 1:
            return sn.partial_rule(relpath)
    elif source_key == "para_instructions":
        if relpath in ("para_instructions.json", "para_instructions.tsv"):
            return _derived(TK_FORK, "tmp/new_instruction_{1,2,3}.csv", "columns of the three CSVs, reshaped")
    elif source_key == "diverse_prompt":
        if relpath == "index.tsv" or (relpath.startswith("tasks/") and relpath.endswith(".json")):
            return _derived(SOURCES["diverse_prompt"].upstreams[0],
                            "data/annotations/*.json; data/raw/execute/*.json; data/induction_input/*.json",
                            "normalized per task")
    elif source_key == "robustness_tk_results":
        if relpath.endswith(".csv") and "/" not in relpath:
            return _upstream(*TK_FORK, f"tk_results/{relpath}")
    elif source_key == "opinionqa":
        parts = relpath.split("/")
        if parts[0] == "annotated_responses" and len(parts) == 3 and parts[2].endswith(".jsonl"):
            split = parts[2][: -len(".jsonl")]
            return _upstream(*MCQ, f"labeled_model_output/{parts[1]}/{split}.json_labeled.json",
                             note="verbatim, renamed")
        if parts[0] == "paper_mapping_results" and len(parts) == 4 and parts[3] == "mapping_result.json":
            return _upstream(*MCQ, f"outputs/{parts[1].replace('_', ' ')}/{parts[2]}/mapping_result.json",
                             note="verbatim, renamed")
        if relpath in ("questions_all.jsonl", "subset_414.jsonl", "subset_414_ids.txt", "disagreement_500_ids.txt"):
            return _derived(OPINIONS_QA, "data/human_resp/*/info.csv",
                            "converted from info.csv; the 414 subset matched to MCQ-Mismatch labeled_model_output")
    elif source_key == "ambigprompt":
        if relpath == "feature_definitions.tsv":
            return _derived(SOURCES["ambigprompt"].upstreams[0], "run.py", "our table built from run.py label maps")
        if relpath.endswith(".json") and "/" not in relpath:
            repo, commit = SOURCES["ambigprompt"].upstreams[0]
            data = json.loads((src_dir / relpath).read_text(encoding="utf-8"))
            demo_max = max(len(data.get(k, [])) for k in ("demos_1_1", "demos_0_0"))
            if relpath.startswith("boolq_"):
                return _upstream(repo, commit, f"testsets_ambiguous/{relpath}")
            trim = {"op": "ambig_demos", "keep": demo_max, "json": json_style(src_dir / relpath)}
            return _upstream(repo, commit, f"testsets_ambiguous/{relpath}", identical=False, trim=trim,
                             note=f"demo lists cut to the first {demo_max}; test splits full")
    elif source_key in ("icl_imdb", "icl_yelp", "icl_mnli"):
        if relpath.endswith(".jsonl") and "/" not in relpath:
            origin = {"icl_imdb": "aclImdb/{train,test}/{pos,neg}/*.txt", "icl_yelp": "data/yelp/{dev,test}.csv",
                      "icl_mnli": "data/k-shot/MNLI/16-{13,21,42,87,100}/{train,dev_matched}.tsv"}[source_key]
            return _derived(SOURCES[source_key].upstreams[0], origin, "sampled with random.Random(0) (see README)")
    elif source_key in FOLLOWUP_ORIGINALS:
        local, upstream = FOLLOWUP_ORIGINALS[source_key]
        if relpath == local:
            return _upstream(*SOURCES[source_key].upstreams[0], upstream)
        if relpath == "normalized.jsonl":
            return _derived(SOURCES[source_key].upstreams[0], upstream,
                            "normalized copy for cross-checks; the loaders read the original", optional=True)
    elif source_key == "mmlu":
        if relpath in ("test_sample500.jsonl", "test_sample500.csv", "dev_5shot.jsonl", "subject_counts.tsv"):
            return _derived(SOURCES["mmlu"].upstreams[0], "data/mmlu/{test,dev}/*.csv",
                            "stratified sample (random.Random(0)) / 5-shot dev (see README)",
                            optional=relpath == "test_sample500.csv")
    raise WobbleError(f"no provenance rule for mirror file '{relpath}' of source '{source_key}'; "
                      f"add one to wobble/data/pin.py before pinning it")


def build_pins(mirror: str | Path) -> list[Pin]:
    """Pins for every file of every source folder under ``mirror`` (sorted by source, then path)."""
    mirror = Path(mirror)
    pins: list[Pin] = []
    for key, source in SOURCES.items():
        src_dir = mirror / source.mirror_subdir
        if not src_dir.is_dir():
            raise WobbleError(f"source '{key}': folder {src_dir} is missing from the mirror")
        ctx: dict = {}
        for path in sorted(p for p in src_dir.rglob("*") if p.is_file()):
            relpath = path.relative_to(src_dir).as_posix()
            if any(part.startswith(".") for part in relpath.split("/")):
                continue
            r = rule_for(key, relpath, src_dir, ctx)
            url = raw_url(r["repo"], r["commit"], r["upstream_path"]) if r["url_ok"] else ""
            pins.append(Pin(key, relpath, sha256_file(path), path.stat().st_size, r["repo"], r["commit"],
                            r["upstream_path"], url, r["identical"], r["optional"], r["trim"], r["note"]))
    return pins


def write_pins(pins: list[Pin], out: str | Path) -> None:
    with atomic_write(out) as f:
        f.write("\t".join(PIN_COLUMNS) + "\n")
        for pin in pins:
            row = pin.to_row()
            for col in PIN_COLUMNS:
                if "\t" in row[col] or "\n" in row[col]:
                    raise WobbleError(f"pin {pin.source}/{pin.relpath}: column {col} holds a tab or newline")
            f.write("\t".join(row[c] for c in PIN_COLUMNS) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m wobble.data.pin", description=__doc__.split("\n\n")[0])
    ap.add_argument("mirror", help="the offline mirror folder (layout of ../shared/data)")
    ap.add_argument("--out", default=None, help="where to write pins.tsv (default: the packaged file)")
    ap.add_argument("--check", action="store_true", help="only compare with the packaged pins.tsv")
    args = ap.parse_args(argv)
    pins = build_pins(args.mirror)
    if args.check:
        current = parse_pins(pins_path())
        old = {(p.source, p.relpath): p.to_row() for p in current}
        new = {(p.source, p.relpath): p.to_row() for p in pins}
        diffs = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        for k in diffs[:50]:
            print(f"differs: {k[0]}/{k[1]}", file=sys.stderr)
        print(f"{len(pins)} files; {len(diffs)} pin(s) differ from {pins_path()}")
        return 1 if diffs else 0
    out = Path(args.out) if args.out else pins_path()
    write_pins(pins, out)
    print(f"wrote {len(pins)} pins for {len(SOURCES)} sources to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
