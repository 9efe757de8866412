"""The ledger a person reads, from a claim declared in the engine's style end to end: records -> unit table ->
rows -> findings.md (counts first, a short table, one section per claim) and a CSV with every field; old rows
render the same way."""

from __future__ import annotations

import pandas as pd

from wobble.report.claims import Claim, Measurement
from wobble.report.engine import ClaimSpec, UnitTable, measure_all
from wobble.report.findings import MAX_CELL, render_findings, summary_lines, table_frame, write_findings
from wobble.report.gates import Precondition, mapped, positional
from wobble.report.intervals import Mean
from wobble.report.ledger import ledger_rows, write_ledger

# ---- what a study's claims module becomes: declarations, a unit-table builder, a statistic -----------------
STUDY = "first_token"


def _can_disagree(f: pd.DataFrame) -> tuple[bool, str]:
    share = 1 - f["opens_with_letter"].mean()
    return share >= 0.05, f"{share:.0%} of texts do not open with the letter"


CAN_DISAGREE = Precondition("can disagree", "at least 5% of texts do not open with the first-token letter",
                            "toward the null", _can_disagree)
CLAIMS = (
    ClaimSpec(STUDY, "refusal_major_reason", "refusal behind mismatches",
              "refusal is one of the major reasons for the mismatch " + "(long quote) " * 12, "§4.1 Figure 2a",
              "Figure 2a: refusal bars over the whole bar, read per model in every one of the paper's six panels",
              Mean("refused", description="share of a question's mismatches where the text refuses"),
              unit="question", null=0.25, min_units=10, gates=(mapped(0.5), positional(0.95)),
              preconditions=(CAN_DISAGREE,), evidence="figure", paper_effect=0.4, freeze="0123abc"),
    ClaimSpec(STUDY, "mismatch_over_60", "mismatch over 60%", "reaching mismatch rates over 60%", "Abstract",
              "66.2% (Llama2-7b-Chat)", Mean("mismatch", description="a question's mismatch rate"),
              unit="question", null=0.6, scope="exists", freeze="0123abc"),
)


def build_tables(records: pd.DataFrame) -> dict[str, UnitTable]:
    """The unit tables: one row per prompt, the question its unit, the level its cell."""
    base = records.rename(columns={"question_uid": "question", "level": "cell"})
    mism = base[base["mismatch"] == 1]
    return {"refusal_major_reason": UnitTable(mism, "question"), "mismatch_over_60": UnitTable(base, "question")}


def records() -> pd.DataFrame:
    """Two models x 40 questions x 5 shuffles at level Low; 'smol' is positional (always letter A)."""
    rows = []
    for model in ("qwen", "smol"):
        for q in range(40):
            for s in range(5):
                mis = int((q + s) % (2 if model == "qwen" else 5) == 0)
                rows.append({"model": model, "question_uid": f"q{q}", "level": "Low", "shuffle": s,
                             "mismatch": mis, "refused": int(mis and (q % 3 != 0)), "mapped": 1,
                             "first_letter": "A" if model == "smol" else "ABCD"[(q + s) % 4],
                             "opens_with_letter": int(s != 0)})
    return pd.DataFrame(rows)


def test_a_claim_declared_in_the_engine_style_end_to_end(tmp_path):
    rows = measure_all(CLAIMS, build_tables(records()), ["qwen", "smol", "gemma"], n_boot=200)
    by = {r["row_id"]: r for r in rows}
    assert list(by) == ["ft-01-qwen", "ft-01-smol", "ft-01-gemma", "ft-02-any", "ft-02-qwen", "ft-02-smol",
                        "ft-02-gemma"]
    assert by["ft-01-qwen"]["verdict"] == "reproduced"
    assert by["ft-01-smol"]["verdict"] == "inconclusive" and by["ft-01-smol"]["would_be"] == "reproduced"
    assert "Low: degenerate 1.00, positional 1.00 ✗" == by["ft-01-smol"]["gate_figures"]
    assert by["ft-01-gemma"]["reason"] == "not measured in this run"
    assert by["ft-02-any"]["verdict"] == "inconclusive"  # gemma not run leaves an existence claim open
    assert [r["verdict"] for r in rows if r["claim"] == "mismatch_over_60"][1:3] == ["contradicted", "contradicted"]

    paths = write_findings(rows, tmp_path / "findings", "Claims ledger: first_token")
    md = paths[0].read_text()
    lines = md.splitlines()
    assert lines[2] == "* 4 rows: 1 reproduced, 0 contradicted, 0 not applicable, 3 inconclusive."
    assert lines[3].startswith("* Not applicable, by the verdict") and \
        lines[4] == ("* Inconclusive: 1 not measured in this run; 1 gated, whose intervals alone would say: "
                     "1 reproduced, 0 contradicted, 0 inconclusive.")
    table = [ln for ln in lines if ln.startswith("| ft-")]
    assert len(table) == 4  # existence members are lines of their section, not rows of the count
    assert "| ft-01-smol | refusal behind mismatches | smol |" in md
    assert "inconclusive (gated) — the interval alone would say reproduced" in md
    assert md.count("refusal is one of the major reasons") == 1 and md.count("reaching mismatch rates") == 1
    assert "Definition frozen at commit 0123abc." in md
    assert "the paper's own verdict" in md or "no verdict for the paper's own number" in md
    assert "`ft-02-smol` smol" in md  # the member line in the existence claim's section
    csv = pd.read_csv(paths[1])
    assert {"row_id", "would_be", "gate_figures", "precondition_note", "freeze", "counted", "quote"} <= set(csv)
    assert len(csv) == len(rows)


def test_no_cell_of_the_table_is_longer_than_the_limit():
    rows = measure_all(CLAIMS, build_tables(records()), ["qwen", "smol"], n_boot=50)
    md = render_findings(rows, "t")
    for ln in (ln for ln in md.splitlines() if ln.startswith("| ")):
        cells = [c.strip() for c in ln.strip("|").split(" | ")]
        assert max(map(len, cells)) <= MAX_CELL, ln
    assert table_frame(rows)["paper"].str.len().max() <= MAX_CELL


def test_old_rows_render_in_the_new_layout_and_new_rows_in_the_old():
    up = Claim(study="first_token", id="up", quote="X lowers scores", section="§4", paper_value="-5.1",
               effect="drop", per_model=True, precondition="p")
    old = ledger_rows([up], {"up": {"a": Measurement(-2.0, -3.0, -1.0, 50, applicable=False),
                                    "b": Measurement(2.0, 1.0, 3.0, 50)}})
    frame = table_frame(old)
    assert list(frame["id"]) == ["ft-01-a", "ft-01-b"]
    assert list(frame["verdict"]) == ["not applicable — the interval alone would say contradicted", "reproduced"]
    assert summary_lines(old)[1] == ("Not applicable, by the verdict the interval alone would give: 0 reproduced, "
                                     "1 contradicted, 0 inconclusive.")
    new = measure_all(CLAIMS[:1], build_tables(records()), ["qwen"], n_boot=50)
    assert "refusal is one of the major reasons" in render_findings(old + new, "both")


def test_engine_rows_still_write_through_the_old_ledger(tmp_path):
    rows = measure_all(CLAIMS[:1], build_tables(records()), ["qwen"], n_boot=50)
    paths = write_ledger(rows, tmp_path / "old", "old layout")
    assert "reproduced" in paths[0].read_text()
