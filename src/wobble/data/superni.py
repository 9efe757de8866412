"""Super-NaturalInstructions loaders (source ``superni``; datasets superni_test, superni_tasks, superni_train).

The source folder (mirror ``superni/``) holds ``splits/default/{test,train}_tasks.txt``,
``splits/xlingual/test_tasks.txt``, ``test_categories.tsv`` (category, abbreviation and paper metric of
all 154 test tasks), ``coverage.tsv`` (a status per split task: full / truncated / partial / missing),
``tasks/<task>.json`` (upstream task files, instances trimmed) and ``tasks_partial/<task>.json`` (the
fork's extraction, used only where ``tasks/`` has no file). Format quirks handled here: ``Definition``
is a one-item list (an old-format file may hold a bare string; task288 holds two, the first is used);
task304, task1534 and task1728 and every ``tasks_partial`` file have no instance ids (a deterministic
``"<task>-<index>"`` is made and ``id_synthesized`` is true); ``tasks_partial`` instances carry only the
first gold output; old-format files lack ``Input_language`` (the test_categories language is used).

Instance record (superni_test: every instance of the 119 English + 35 non-English test tasks, in split
file order then file order; superni_train: instances of the mirrored train tasks):

* ``task`` (str): SuperNI task name, e.g. ``"task1342_amazon_us_reviews_title"``.
* ``split`` (str): ``"default"`` (English test), ``"xlingual"`` (non-English test) or ``"train"``.
* ``category`` (str): the paper's test category (test_categories.tsv), e.g. ``"Title Generation"``;
  for train tasks the task file's ``Categories[0]``.
* ``category_abbrev`` (str | None): e.g. ``"TG"``; None for train tasks.
* ``metric`` (str | None): ``"exact_match"`` or ``"rougeL"`` (the paper's metric for the category);
  None for train tasks.
* ``language`` (str): ``Input_language[0]`` (e.g. ``"English"``, ``"Persian"``), or the
  test_categories language (``"English"`` / ``"non-English"``) when the file has none.
* ``definition`` (str): ``Definition[0]``.
* ``pos_examples`` / ``neg_examples`` (list of {``input``, ``output``, ``explanation``}: str).
* ``id`` (str): the instance id, or ``"<task>-<index>"`` (0-based index in the file) when absent.
* ``id_synthesized`` (bool): true when ``id`` was made up here.
* ``input`` (str); ``outputs`` (list[str], non-empty): ALL gold references (score = max over them).
* ``data_status`` (str): the task's coverage status: ``"full"``, ``"truncated"`` or ``"partial"``.
* ``data_file`` (str): the file read, relative to the source folder (``"tasks/<task>.json"`` or
  ``"tasks_partial/<task>.json"``).

Task record (superni_tasks: one per test task, all 154, including tasks with no data):
``task, split, category, category_abbrev, metric, language, definition`` (None if no data),
``pos_examples, neg_examples`` ([] if no data), ``n_instances`` (int), ``data_status`` (``"missing"``
when there is no file), ``data_file`` (None if no data).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from wobble.data._util import expect, get, load_json, normalize_metric, read_lines, read_tsv, str_list
from wobble.errors import DataError

SPLIT_FILES = {"default": "splits/default/test_tasks.txt", "xlingual": "splits/xlingual/test_tasks.txt"}
TRAIN_SPLIT_FILE = "splits/default/train_tasks.txt"
CATEGORY_COLUMNS = ("task", "split_file", "language", "category", "abbrev", "metric", "category_source",
                    "data_in_mirror", "n_instances_in_mirror")
COVERAGE_STATUS = {"full", "truncated", "partial", "missing"}


def read_categories(src: Path) -> dict[str, dict[str, Any]]:
    """test_categories.tsv -> {task: {split, language, category, category_abbrev, metric, n_instances_in_mirror}}."""
    path = src / "test_categories.tsv"
    out: dict[str, dict[str, Any]] = {}
    for lineno, row in read_tsv(path, required=CATEGORY_COLUMNS[:6]):
        rec = f"line {lineno} ({row['task']})"
        expect(row["split_file"] in SPLIT_FILES, path, rec, f"split_file default or xlingual, got {row['split_file']!r}")
        expect(row["task"] not in out, path, rec, "each task listed once")
        expect(bool(row["category"]) and bool(row["abbrev"]), path, rec, "a category and its abbreviation")
        n = row.get("n_instances_in_mirror", "")
        expect(n == "" or n.isdigit(), path, rec, f"n_instances_in_mirror an integer, got {n!r}")
        out[row["task"]] = {"split": row["split_file"], "language": row["language"], "category": row["category"],
                            "category_abbrev": row["abbrev"], "metric": normalize_metric(path, rec, row["metric"]),
                            "n_instances_in_mirror": int(n) if n else None}
    return out


def read_coverage(src: Path) -> dict[str, dict[str, Any]]:
    """coverage.tsv -> {task: {split, status, n_instances_in_mirror}}."""
    path = src / "coverage.tsv"
    out: dict[str, dict[str, Any]] = {}
    for lineno, row in read_tsv(path, required=("task", "split", "status", "n_instances_in_mirror")):
        rec = f"line {lineno} ({row['task']})"
        expect(row["status"] in COVERAGE_STATUS, path, rec, f"status in {sorted(COVERAGE_STATUS)}, got {row['status']!r}")
        expect(row["split"] in ("test_default", "test_xlingual", "train"), path, rec,
               f"split test_default, test_xlingual or train, got {row['split']!r}")
        expect(row["n_instances_in_mirror"].isdigit(), path, rec, "n_instances_in_mirror an integer")
        expect(row["task"] not in out, path, rec, "each task listed once")
        out[row["task"]] = {"split": row["split"], "status": row["status"],
                            "n_instances_in_mirror": int(row["n_instances_in_mirror"])}
    return out


def task_file(src: Path, task: str) -> tuple[Path | None, str | None]:
    """The file to read for ``task``: tasks/ preferred over tasks_partial/; (None, None) if neither."""
    for folder in ("tasks", "tasks_partial"):
        p = src / folder / f"{task}.json"
        if p.is_file():
            return p, f"{folder}/{task}.json"
    return None, None


def _definition(path: Path, data: dict) -> str:
    d = data.get("Definition")
    if isinstance(d, str):  # old-format upstream file: a bare string
        return d
    expect(isinstance(d, list) and len(d) >= 1 and all(isinstance(x, str) for x in d), path, "Definition",
           f"a list holding the definition string (Definition[0]), got {d!r:.80}")
    return d[0]


def _examples(path: Path, data: dict, key: str) -> list[dict[str, str]]:
    items = get(path, key, data, key, list, expected="a list of examples")
    out = []
    for i, ex in enumerate(items):
        rec = f"{key}[{i}]"
        out.append({"input": get(path, rec, ex, "input", str), "output": get(path, rec, ex, "output", str),
                    "explanation": get(path, rec, ex, "explanation", str)})
    return out


def load_task(path: Path, task: str) -> dict[str, Any]:
    """Parse and validate one task file: definition, examples, languages, categories, instances."""
    data = load_json(path, f"the SuperNI task file of {task}")
    expect(isinstance(data, dict), path, "(top level)", "a JSON object (a SuperNI task)")
    categories = str_list(path, "Categories", data, "Categories")
    langs = str_list(path, "Input_language", data, "Input_language", optional=True)
    instances = get(path, "Instances", data, "Instances", list, expected="a list of instances")
    parsed = []
    for i, inst in enumerate(instances):
        rec = f"Instances[{i}]"
        iid = get(path, rec, inst, "id", str, optional=True, check=lambda v: bool(v.strip()),
                  expected="a non-empty string id")
        parsed.append({"id": iid if iid is not None else f"{task}-{i}", "id_synthesized": iid is None,
                       "input": get(path, rec, inst, "input", str),
                       "outputs": list(str_list(path, rec, inst, "output"))})
    ids = [p["id"] for p in parsed]
    if len(set(ids)) != len(ids):
        dup = next(x for x in ids if ids.count(x) > 1)
        raise DataError(path, f"Instances (id {dup})", "unique instance ids")
    return {"definition": _definition(path, data), "categories": categories,
            "language": langs[0] if langs else None,
            "pos_examples": _examples(path, data, "Positive Examples"),
            "neg_examples": _examples(path, data, "Negative Examples"), "instances": parsed}


def _test_tasks(src: Path) -> list[tuple[str, str]]:
    """[(task, split)] in split-file order (default, then xlingual), checked against test_categories.tsv."""
    cats = read_categories(src)
    tasks = []
    for split, rel in SPLIT_FILES.items():
        for task in read_lines(src / rel, f"the SuperNI {split} test split"):
            if task not in cats:
                raise DataError(src / "test_categories.tsv", task, f"a row for test task {task} (listed in {rel})")
            if cats[task]["split"] != split:
                raise DataError(src / "test_categories.tsv", task, f"split_file {split} (the task is in {rel})")
            tasks.append((task, split))
    listed = {t for t, _ in tasks}
    extra = sorted(set(cats) - listed)
    if extra:
        raise DataError(src / "test_categories.tsv", extra[0], "only tasks listed in the test split files")
    return tasks


def _check_status(src: Path, cov: dict, task: str, rel: str | None, n: int) -> str:
    path = src / "coverage.tsv"
    if task not in cov:
        raise DataError(path, task, "a coverage row for this split task")
    status = cov[task]["status"]
    want_folder = {"full": "tasks", "truncated": "tasks", "partial": "tasks_partial", "missing": None}[status]
    got_folder = rel.split("/")[0] if rel else None
    if got_folder != want_folder:
        raise DataError(path, task, f"status {status!r} to match the data found "
                                    f"({rel or 'no task file'}); expected a file in {want_folder or 'neither folder'}")
    if cov[task]["n_instances_in_mirror"] != n:
        raise DataError(path, task, f"n_instances_in_mirror {cov[task]['n_instances_in_mirror']} "
                                    f"to equal the instances in {rel} ({n})")
    return status


def _task_info(src: Path, cats: dict, cov: dict, task: str, split: str) -> tuple[dict, list[dict]]:
    path, rel = task_file(src, task)
    parsed = load_task(path, task) if path else None
    n = len(parsed["instances"]) if parsed else 0
    status = _check_status(src, cov, task, rel, n)
    c = cats[task]
    if c["n_instances_in_mirror"] is not None and c["n_instances_in_mirror"] != n:
        raise DataError(src / "test_categories.tsv", task, f"n_instances_in_mirror {c['n_instances_in_mirror']} "
                                                          f"to equal the instances in {rel} ({n})")
    info = {"task": task, "split": split, "category": c["category"], "category_abbrev": c["category_abbrev"],
            "metric": c["metric"], "language": (parsed or {}).get("language") or c["language"],
            "definition": parsed["definition"] if parsed else None,
            "pos_examples": parsed["pos_examples"] if parsed else [],
            "neg_examples": parsed["neg_examples"] if parsed else [],
            "data_status": status, "data_file": rel}
    return info, (parsed["instances"] if parsed else [])


def _instance_records(info: dict, instances: list[dict]) -> Iterator[dict]:
    for inst in instances:
        yield {"task": info["task"], "split": info["split"], "category": info["category"],
               "category_abbrev": info["category_abbrev"], "metric": info["metric"], "language": info["language"],
               "definition": info["definition"], "pos_examples": info["pos_examples"],
               "neg_examples": info["neg_examples"], "id": inst["id"], "id_synthesized": inst["id_synthesized"],
               "input": inst["input"], "outputs": inst["outputs"], "data_status": info["data_status"],
               "data_file": info["data_file"]}


def load_test_instances(src: Path) -> Iterator[dict]:
    """superni_test records (see the module docstring)."""
    src = Path(src)
    cats, cov = read_categories(src), read_coverage(src)
    for task, split in _test_tasks(src):
        info, instances = _task_info(src, cats, cov, task, split)
        yield from _instance_records(info, instances)


def load_test_tasks(src: Path) -> Iterator[dict]:
    """superni_tasks records: one per test task, all 154."""
    src = Path(src)
    cats, cov = read_categories(src), read_coverage(src)
    for task, split in _test_tasks(src):
        info, instances = _task_info(src, cats, cov, task, split)
        yield {**info, "n_instances": len(instances)}


def load_train_instances(src: Path) -> Iterator[dict]:
    """superni_train records: instances of every train task that has a file in tasks/ (split-file order)."""
    src = Path(src)
    cov = read_coverage(src)
    for task in read_lines(src / TRAIN_SPLIT_FILE, "the SuperNI train split"):
        path = src / "tasks" / f"{task}.json"
        if not path.is_file():
            if cov.get(task, {}).get("status") not in (None, "missing"):
                raise DataError(src / "coverage.tsv", task, f"status 'missing' (no file {path.name} in tasks/)")
            continue
        parsed = load_task(path, task)
        rel = f"tasks/{task}.json"
        status = _check_status(src, cov, task, rel, len(parsed["instances"]))
        info = {"task": task, "split": "train", "category": parsed["categories"][0], "category_abbrev": None,
                "metric": None, "language": parsed["language"] or "English", "definition": parsed["definition"],
                "pos_examples": parsed["pos_examples"], "neg_examples": parsed["neg_examples"],
                "data_status": status, "data_file": rel}
        yield from _instance_records(info, parsed["instances"])
