"""Rules of the icl_imdb recipe (wobble.data.recipes.icl_imdb) on a tiny hand-made aclImdb tree."""

import hashlib
from fnmatch import fnmatchcase
import json
import random

from wobble.data.derive import tree_digest
from wobble.data.recipes import icl_imdb

FILES = {
    "train/pos/1016_9.txt": "Great<br /><br />film.",
    "train/pos/10160_8.txt": "Loved it " * 30,
    "test/pos/3_10.txt": "Wonderful, naïve and sweet!",
    "test/pos/4_7.txt": "ok " * 37 + "a<br /><br />b",
    "train/neg/5_1.txt": "Awful.",
    "train/neg/6_2.txt": "bad " * 45,
    "test/neg/7_4.txt": "Meh<br />meh",
    "test/neg/8_3.txt": "terrible " * 41,
    # not read: unlabelled reviews and bag-of-words files
    "train/unsup/9_0.txt": "unlabelled",
    "train/labeledBow.feat": "0 1:1",
}


def make_tree(tmp_path):
    root = tmp_path / "aclImdb"
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode("utf-8"))
    return root


def jsonl(raw):
    return [json.loads(x) for x in raw.decode("utf-8").splitlines()]


def test_files_read_and_digest_cover_only_labelled_txt(tmp_path):
    root = make_tree(tmp_path)
    rels = [p.relative_to(root).as_posix() for p in icl_imdb.files_read(root)]
    assert rels == sorted(r for r in FILES if "/unsup/" not in r and r.endswith(".txt"))
    want = "".join(f"{hashlib.sha256(FILES[r].encode()).hexdigest()}  {r}\n" for r in rels)
    for f in [f for f in root.rglob("*") if f.is_file()]:  # what derive extracts: ARCHIVE_FILES only
        if not any(fnmatchcase(f.relative_to(root).as_posix(), k) for k in icl_imdb.ARCHIVE_FILES["aclImdb"]):
            f.unlink()
    assert tree_digest(root) == hashlib.sha256(want.encode()).hexdigest()


def test_review_fields():
    r = icl_imdb.review("test/neg/10051_2.txt", "Bad<br />film".encode())
    assert r == {"id": "imdb_test_neg_10051", "text": "Bad<br />film", "label": 0, "label_text": "negative",
                 "rating": 2, "domain": "imdb", "source_split": "test", "source_path": "aclImdb/test/neg/10051_2.txt"}


def test_sample_is_path_sorted_random0_pos_then_neg_then_shuffle(tmp_path, monkeypatch):
    root = make_tree(tmp_path)
    monkeypatch.setattr(icl_imdb, "N_PER_CLASS", 2)
    out = icl_imdb.build({"aclImdb": root})
    got = jsonl(out[icl_imdb.OUT_SAMPLE])
    reviews = [icl_imdb.review(p.relative_to(root).as_posix(), p.read_bytes()) for p in icl_imdb.files_read(root)]
    pool = sorted(reviews, key=lambda r: r["source_path"])
    rng = random.Random(0)
    want = rng.sample([r for r in pool if r["label"]], 2) + rng.sample([r for r in pool if not r["label"]], 2)
    rng.shuffle(want)
    assert got == want
    assert sum(r["label"] for r in got) == 2
    # input order does not matter: the pool is sorted by path first
    assert icl_imdb.sample(list(reversed(reviews)), 2) == want
    assert out == icl_imdb.build({"aclImdb": root})


def test_short_file_word_rule_id_order_and_flag(tmp_path, monkeypatch):
    root = make_tree(tmp_path)
    monkeypatch.setattr(icl_imdb, "N_PER_CLASS", 2)
    out = icl_imdb.build({"aclImdb": root})
    picked = {r["id"] for r in jsonl(out[icl_imdb.OUT_SAMPLE])}
    short = jsonl(out[icl_imdb.OUT_SHORT])
    # "ok "*37 + "a<br /><br />b" is 39 words once <br /> becomes a space (40 tokens without that).
    assert [r["id"] for r in short] == ["imdb_test_neg_7", "imdb_test_pos_3", "imdb_test_pos_4", "imdb_train_neg_5",
                                        "imdb_train_pos_1016"]
    assert all(r["in_imdb_4000"] == (r["id"] in picked) for r in short)
    assert short[1]["text"] == "Wonderful, naïve and sweet!"
    assert "naïve".encode("utf-8") in out[icl_imdb.OUT_SHORT]
    assert icl_imdb.word_count("a<br />b") == 2 and icl_imdb.word_count("a<br /><br />b") == 2


def test_id_order_differs_from_path_order():
    ids = ["imdb_train_pos_10160", "imdb_train_pos_1016"]
    paths = ["aclImdb/train/pos/10160_8.txt", "aclImdb/train/pos/1016_9.txt"]
    assert sorted(ids) == ["imdb_train_pos_1016", "imdb_train_pos_10160"]
    assert sorted(paths) == paths
