"""Rules of the icl_mnli recipe (wobble.data.recipes.icl_mnli) on tiny hand-made k-shot TSVs."""

import json

from wobble.data.recipes import icl_mnli

HEADER = ("index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\t"
          "sentence2_parse\tsentence1\tsentence2\tlabel1\tgold_label\n")


def row(index, pid, genre, s1, s2, gold):
    prompt = pid[:-1]
    return f"{index}\t{prompt}\t{pid}\t{genre}\t( a )\t( b )\t(ROOT a)\t(ROOT b)\t{s1}\t{s2}\t{gold}\t{gold}\n"


def write_inputs(tmp_path, files):
    inputs = {}
    for name in icl_mnli.INPUTS:
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(HEADER + "".join(files.get(name, [])), encoding="utf-8")
        inputs[name] = p
    return inputs


def records(out):
    text = out[icl_mnli.OUTPUT].decode("utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_union_dedup_sort_and_fields(tmp_path):
    files = {
        "data/k-shot/MNLI/16-13/train.tsv": [row(5, "200e", "travel", "P1", "H1", "entailment"),
                                             row(7, "1185c", "fiction", '"Quoted" x', "H2", "contradiction")],
        "data/k-shot/MNLI/16-100/dev_matched.tsv": [row(5, "200e", "travel", "P1", "H1", "entailment"),
                                                    row(9, "10011n", "fiction", "Café", "H3", "neutral")],
    }
    recs = records(icl_mnli.build(write_inputs(tmp_path, files)))
    # sorted by (genre, pairID) as strings; the duplicate pairID collapses into one row.
    assert [r["pairID"] for r in recs] == ["10011n", "1185c", "200e"]
    dup = recs[2]
    assert dup["kshot_files"] == ["16-13/train.tsv", "16-100/dev_matched.tsv"]
    assert dup == {"id": "mnli_200e", "premise": "P1", "hypothesis": "H1", "gold_label": "entailment",
                   "label_entail": 1, "genre": "travel", "promptID": "200", "pairID": "200e", "mnli_split": "train",
                   "glue_train_index": "5", "kshot_files": ["16-13/train.tsv", "16-100/dev_matched.tsv"]}
    assert recs[1]["premise"] == '"Quoted" x'  # no CSV quote processing
    assert [r["label_entail"] for r in recs] == [0, 0, 1]


def test_non_ascii_kept_verbatim(tmp_path):
    files = {"data/k-shot/MNLI/16-42/train.tsv": [row(1, "1n", "slate", "Café", "naïve", "neutral")]}
    raw = icl_mnli.build(write_inputs(tmp_path, files))[icl_mnli.OUTPUT]
    assert "Café".encode("utf-8") in raw and b"\\u" not in raw


def test_conflicting_duplicate_is_an_error(tmp_path):
    files = {"data/k-shot/MNLI/16-13/train.tsv": [row(1, "1e", "slate", "A", "B", "entailment")],
             "data/k-shot/MNLI/16-21/train.tsv": [row(1, "1e", "slate", "A", "C", "entailment")]}
    try:
        icl_mnli.build(write_inputs(tmp_path, files))
    except ValueError as e:
        assert "1e" in str(e)
    else:
        raise AssertionError("expected a ValueError")
