"""The report's landing page (wobble.landing): verdict counts, a summary per study with a link to each of its
files, the merged ledger; the page in a browser: tests/workflow/test_workflow_e2e.py."""

import pytest

from wobble import landing
from wobble.landing import Entry, landing_html, parse_entries

LEDGER_MD = """# Claims ledger: every study

| study | claim | verdict |
|---|---|---|
| instructions | “shuffle words is worst” (§3.1) | **reproduced** (95% CI excludes the null) |
| instructions | “close: < 5” (§3.2) | **inconclusive** (a \\| b) |

* 2 rows: 1 reproduced, 0 contradicted, 0 not applicable, 1 inconclusive.
"""
LEDGER_CSV = """study,model,verdict,evidence,paper_verdict,detects_paper_effect
instructions,gemma-270m-ni,reproduced,table,reproduced,True
instructions,qwen2.5-coder-0.5b-instruct,inconclusive,text,,
"""
ENTRIES = [
    Entry("0. claims ledger", "Other", "results/findings.md"),
    Entry("instructions", "tables", "results/instructions/tables/table4.md"),
    Entry("instructions", "figures", "results/instructions/figures/figure_drop.png"),
    Entry("instructions", "claims ledger", "results/instructions/findings.md"),
    Entry("scorecards", "Other", "results/scorecard/gemma-270m-ni.md"),
]


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    """A run's ledgers (merged and the instructions study's) under results/, the working directory there."""
    for stem in ("results/findings", "results/instructions/findings"):
        (tmp_path / stem).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f"{stem}.md").write_text(LEDGER_MD, encoding="utf-8")
        (tmp_path / f"{stem}.csv").write_text(LEDGER_CSV, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_entries_are_read_from_category_subcategory_path_lines():
    lines = ["", "   instructions | tables | results/instructions/tables/table4.md", "0. claims ledger | Other | x.md"]
    assert parse_entries(lines) == [Entry("instructions", "tables", "results/instructions/tables/table4.md"),
                                    Entry("0. claims ledger", "Other", "x.md")]


def test_landing_has_the_counts_each_study_with_its_files_and_the_ledger_as_a_table(run_dir):
    page = landing_html(ENTRIES, "results/findings.md")
    counts = "2 rows: 1 reproduced, 0 contradicted, 0 not applicable, 1 inconclusive."
    assert page.count(counts) >= 3  # the verdicts line, the study's summary, the ledger's own note
    assert "Gu et al. 2023" in page and "Models:</strong> gemma-270m-ni, qwen2.5-coder-0.5b-instruct." in page
    for e in ENTRIES:
        assert f"javascript:app.showResultInfo(&#x27;{e.path}&#x27;)" in page, e.path
    assert "javascript:app.showCategory(&#x27;instructions&#x27;)" in page
    assert "javascript:app.showCategory(&#x27;scorecards&#x27;)" in page
    assert 'title="Table 4: ' in page  # the table's caption, first sentence
    assert "<h2>Claims ledger: every study</h2>" in page and "<table>" in page
    assert "<strong>reproduced</strong>" in page and "close: &lt; 5" in page and "(a | b)" in page
    assert page.index("<h2>Studies</h2>") < page.index("<h2>Claims ledger: every study</h2>")


def test_landing_without_the_merged_ledger_says_so_and_still_links_the_files(run_dir):
    page = landing_html(ENTRIES[1:3], "results/findings.md")
    assert "holds no claims ledger across studies" in page and "<table>" not in page
    assert "results/instructions/figures/figure_drop.png" in page


def test_the_directive_renders_in_the_report_page_text(run_dir):
    from docutils.core import publish_parts

    landing.register()
    text = (".. wobble-landing::\n   :ledger: results/findings.md\n\n"
            + "".join(f"   {e.category} | {e.subcategory} | {e.path}\n" for e in ENTRIES))
    body = publish_parts(text, writer="html")["html_body"]
    assert '<div id="wobble-landing">' in body and "System Message" not in body
