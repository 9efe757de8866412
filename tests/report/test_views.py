"""A table's view for the report (wobble.report.views) and the report's build (wobble.report.build): the page
shows the Markdown's table, the views a run lacks are written from its .md, the per-file metadata warnings of a
fresh clone become one line."""

import os

from wobble.report.build import no_record_line, report_command, split_warnings
from wobble.report.views import fill_views, view_html, write_view

MD = """# Table 4: drop per category — ours (paper)

| Condition | AC | CEC |
|---|---|---|
| shuffle words | 3.1 (29.7) | a \\| b |

* Ours: gemma-270m-ni, scale demo.
"""


def test_a_view_is_a_standalone_page_of_the_tables_cells():
    page = view_html(MD)
    assert page.startswith("<!doctype html>") and "<title>Table 4: drop per category — ours (paper)</title>" in page
    assert '<td class="short">shuffle words</td>' in page and '<td class="short">3.1 (29.7)</td>' in page
    assert '<td class="short">a | b</td>' in page
    assert "<li>Ours: gemma-270m-ni, scale demo.</li>" in page and "<style>" in page


def test_raw_html_in_a_table_is_shown_as_text():
    assert "<script>" not in view_html("# t\n\n| a |\n|---|\n| <script>x</script> |\n")


def test_fill_views_writes_the_missing_and_stale_views_only(tmp_path):
    for rel in ("s/tables/t.md", "s/findings.md", "findings.md", "scorecard/m.md", "s/scores/x.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(MD, encoding="utf-8")
    written = fill_views(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == [
        "findings.html", "s/findings.html", "s/tables/t.html", "scorecard/m.html"]
    assert fill_views(tmp_path) == []
    md = tmp_path / "s/tables/t.md"
    os.utime(md, (md.stat().st_mtime + 10,) * 2)
    assert fill_views(tmp_path) == [tmp_path / "s/tables/t.html"]
    assert (tmp_path / "s/tables/t.html").read_text(encoding="utf-8") == view_html(MD)


def test_write_view_beside_the_md_by_default(tmp_path):
    (tmp_path / "a.md").write_text(MD, encoding="utf-8")
    assert write_view(tmp_path / "a.md") == tmp_path / "a.html"


def test_the_per_file_metadata_warnings_become_one_line():
    err = "\n".join(["Building DAG of jobs...", *(f"Missing metadata for file results/x{i}.md. Maybe metadata was "
                                                  "deleted. This is a non critical warning." for i in range(573)),
                     "Report created."])
    kept, dropped = split_warnings(err)
    assert kept == ["Building DAG of jobs...", "Report created."] and dropped == 573
    assert no_record_line(dropped).startswith("573 output files have no Snakemake record here")


def test_the_report_command_carries_the_stylesheet_and_the_config():
    cmd = report_command("results/reference/report.html", "configs/reference.yaml")
    assert cmd[1:] == ["--report", "results/reference/report.html", "--report-stylesheet", "report/style.css",
                       "--configfile", "configs/reference.yaml"]
