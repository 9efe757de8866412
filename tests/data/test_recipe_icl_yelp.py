"""Rules of the icl_yelp recipe (wobble.data.recipes.icl_yelp) on tiny hand-made CSVs."""

import csv
import io
import json
import random

from wobble.data.recipes import icl_yelp


def csv_text(rows):
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(["text", "label1", "label2"])
    for text, cat, stars in rows:
        w.writerow([text, f"Business Category: {cat}", f"Review Stars: {stars}.0"])
    return buf.getvalue()


def test_read_rows_fields_and_quoting():
    text = csv_text([('Multi\nline, "quoted" text', "Bars", 5), ("meh", "Restaurants", 3)])
    rows = icl_yelp.read_rows("dev", text)
    assert rows[0] == {"id": "yelp_augpe_dev_0", "text": 'Multi\nline, "quoted" text', "stars": 5,
                       "business_category": "Bars", "source_split": "dev", "source_row": 0}
    assert rows[1]["source_row"] == 1 and rows[1]["stars"] == 3


def test_sample_drops_3_stars_balances_and_matches_random0():
    rows = [{"id": f"r{i}", "text": f"t{i}", "stars": s, "business_category": "X", "source_split": "test",
             "source_row": i} for i, s in enumerate([5, 4, 3, 2, 1, 3, 5, 1, 4, 2, 3, 5])]
    out = icl_yelp.sample(rows, n_per_class=2)
    assert len(out) == 4 and sum(r["label"] for r in out) == 2
    assert all(r["stars"] != 3 for r in out)
    assert all((r["label"] == 1) == (r["stars"] >= 4) and r["label_text"] == ("positive" if r["label"] else "negative")
               for r in out)
    # the exact call order: one Random(0): sample positives, sample negatives, shuffle the concatenation.
    pos = [r for r in rows if r["stars"] >= 4]
    neg = [r for r in rows if r["stars"] <= 2]
    rng = random.Random(0)
    want = rng.sample(pos, 2) + rng.sample(neg, 2)
    rng.shuffle(want)
    assert [r["id"] for r in out] == [r["id"] for r in want]
    assert out == icl_yelp.sample(rows, n_per_class=2)  # deterministic


def test_build_pools_dev_then_test(tmp_path, monkeypatch):
    dev = tmp_path / "dev.csv"
    test = tmp_path / "test.csv"
    dev.write_text(csv_text([("good", "Bars", 5), ("bad", "Bars", 1)]), encoding="utf-8", newline="")
    test.write_text(csv_text([("great é", "Shopping", 4), ("awful", "Shopping", 2)]), encoding="utf-8", newline="")
    monkeypatch.setattr(icl_yelp, "N_PER_CLASS", 2)
    out = icl_yelp.build({"data/yelp/dev.csv": dev, "data/yelp/test.csv": test})
    raw = out[icl_yelp.OUTPUT]
    recs = [json.loads(x) for x in raw.decode("utf-8").splitlines()]
    assert sorted(r["id"] for r in recs) == ["yelp_augpe_dev_0", "yelp_augpe_dev_1", "yelp_augpe_test_0",
                                             "yelp_augpe_test_1"]
    assert "great é".encode("utf-8") in raw
    assert all(r["domain"] == "yelp" for r in recs)
