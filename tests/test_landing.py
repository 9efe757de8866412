"""The report's landing page (wobble.landing): verdict counts, a summary per study with a link to each of its
files, the merged ledger's short table; the page in a browser: tests/workflow/test_report_e2e.py."""

import pytest

from wobble import landing
from wobble.landing import LEDGER_CATEGORY, Entry, landing_html, ledger_summary, parse_entries

LEDGER_MD = """# Claims ledger: every study

* 2 rows: 1 reproduced, 0 contradicted, 0 not applicable, 1 inconclusive.

| id | claim | model | ours [95% CI] | paper | n | verdict |
|---|---|---|---|---|---|---|
| IN-01-gemma | shuffle words is worst | gemma-270m-ni | 3.1 [1.2, 5] | 14.5 | 40 items | reproduced |
| IN-02-qwen | close: < 5 | qwen2.5-coder-0.5b-instruct | 0.2 [-1, 1.4] | 0.6 | 40 items | inconclusive (a \\| b) |

## Claims

### IN-01 shuffle words is worst

> “the “shuffle words” has the worst effect” (§3.1)

## Rule and notes

* Per study: instructions 1 reproduced, 0 contradicted, 0 not applicable, 1 inconclusive.
"""
LEDGER_CSV = """study,model,verdict,evidence,paper_verdict,detects_paper_effect
instructions,gemma-270m-ni,reproduced,table,reproduced,True
instructions,qwen2.5-coder-0.5b-instruct,inconclusive,text,,
"""
ENTRIES = [
    Entry(LEDGER_CATEGORY, "Other", "results/findings.html"),
    Entry("instructions", "tables", "results/instructions/tables/table4.html"),
    Entry("instructions", "figures", "results/instructions/figures/figure_drop.png"),
    Entry("instructions", "figures", "results/instructions/tables/figure_drop.html"),
    Entry("instructions", "claims ledger", "results/instructions/findings.html"),
    Entry("scorecards", "Other", "results/scorecard/gemma-270m-ni.html"),
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
    lines = ["", "   instructions | tables | results/instructions/tables/table4.html", "0. claims ledger | Other | x.html"]
    assert parse_entries(lines) == [Entry("instructions", "tables", "results/instructions/tables/table4.html"),
                                    Entry("0. claims ledger", "Other", "x.html")]


def test_landing_has_the_counts_each_study_with_its_files_and_the_ledgers_short_table(run_dir):
    page = landing_html(ENTRIES)
    counts = "2 rows: 1 reproduced, 0 contradicted, 0 not applicable, 1 inconclusive."
    assert page.count(counts) >= 3  # the verdicts line, the study's summary, the ledger's own count line
    assert "Gu et al. 2023" in page and "Models:</strong> gemma-270m-ni, qwen2.5-coder-0.5b-instruct." in page
    for e in ENTRIES:
        assert f"javascript:app.showResultInfo(&#x27;{e.path}&#x27;)" in page, e.path
    assert "javascript:app.showCategory(&#x27;instructions&#x27;)" in page
    assert "javascript:app.showCategory(&#x27;scorecards&#x27;)" in page
    assert 'title="Table 4: ' in page  # the table's caption, first sentence
    assert "<h2>Claims ledger: every study</h2>" in page and "<table>" in page
    assert "shuffle words is worst" in page and "close: &lt; 5" in page and "(a | b)" in page
    assert "Per study: instructions 1 reproduced" in page
    assert "the “shuffle words” has the worst effect" not in page  # the claim's section stays in the ledger's view
    assert "90rem" not in page and "position: sticky" not in page
    assert page.index("<h2>Studies</h2>") < page.index("<h2>Claims ledger: every study</h2>")


def test_tables_are_tables_and_a_figures_numbers_sit_beside_the_figure(run_dir):
    page = landing_html(ENTRIES)
    tables = page[page.index("<strong>Tables:</strong>"):page.index("<strong>Figures:</strong>")]
    figures = page[page.index("<strong>Figures:</strong>"):page.index("<strong>Claims ledger:</strong>")]
    assert ">table4</a>" in tables and "figure_drop" not in tables
    assert ">figure_drop.png</a> (<a" in figures and ">numbers</a>)" in figures and "table4" not in figures


def test_a_ledger_in_the_older_layout_is_laid_out_anew_from_its_csv(run_dir):
    old = "# Claims ledger: every study\n\n| study | claim | quote | verdict |\n|---|---|---|---|\n| a | b | c | d |\n"
    (run_dir / "results/findings.md").write_text(old, encoding="utf-8")
    title, body = ledger_summary("results/findings.md")
    assert title == "Claims ledger: every study"
    assert "| id | claim | model | ours [95% CI] | paper | n | verdict |" in body and "| quote |" not in body


def test_landing_without_the_merged_ledger_says_so_and_still_links_the_files(run_dir):
    page = landing_html(ENTRIES[1:3])
    assert "holds no claims ledger across studies" in page and "<table>" not in page
    assert "results/instructions/figures/figure_drop.png" in page


def test_the_directive_renders_in_the_report_page_text(run_dir):
    from docutils.core import publish_parts

    landing.register()
    text = ".. wobble-landing::\n\n" + "".join(f"   {e.category} | {e.subcategory} | {e.path}\n" for e in ENTRIES)
    body = publish_parts(text, writer="html")["html_body"]
    assert '<div id="wobble-landing">' in body and "System Message" not in body
