"""A named run's own page (wobble.report.run_page, rule run_page): its models, scorecards, ledger rows and time,
from small fixture rows; planned for a named config and never for the default run."""

from __future__ import annotations

import os
import subprocess

from conftest import REPO, SNAKEMAKE
from support import planned_jobs
from wobble.report import run_page

LEDGER = [
    {"study": "first_token", "claim": "mismatch_exists", "model": "mine", "verdict": "reproduced", "effect": "0.4083",
     "ci_low": "0.3", "ci_high": "0.51", "unit": "share", "paper": "8.4–66.2 (6 models)"},
    {"study": "first_token", "claim": "refusals", "model": "mine", "verdict": "not applicable", "effect": "",
     "ci_low": "", "ci_high": "", "unit": "share", "paper": ""},
    {"study": "followup", "claim": "consistency_drops", "model": "mine", "verdict": "inconclusive", "effect": "12.5",
     "ci_low": "-3", "ci_high": "30", "unit": "points", "paper": "+52 (ChatGPT)"},
    {"study": "followup", "claim": "every_prompt_declines", "model": "all", "verdict": "contradicted", "effect": "1",
     "ci_low": "0", "ci_high": "2", "unit": "points", "paper": "+52"},
]
CARD = "# Scorecard: mine\n\n| study | quantity |\n|---|---|\n| first_token | mismatch |\n"


def test_ledger_counts_and_short_rows():
    mine = [r for r in LEDGER if r["model"] == "mine"]
    assert run_page.ledger_counts(mine) == "3 rows: 1 reproduced, 1 inconclusive, 1 not applicable"
    assert run_page.ledger_counts([]) == "0 rows"
    table = run_page.ledger_table(mine)
    assert table[2] == ("| first_token | mismatch_exists | mine | reproduced | 0.408 [0.3, 0.51] share | "
                        "8.4–66.2 (6 models) |")
    assert table[3] == "| first_token | refusals | mine | not applicable | – | – |"


def test_run_time_spans_first_start_to_last_end():
    jobs = [{"job": "models/mine", "s": 30.0, "end": 1000.0}, {"job": "first_token/infer_mine_t0.00", "s": 200.0,
            "end": 1300.0}, {"job": "followup/infer_mine_T0.5_mmlu", "s": 150.0, "end": 1250.0}]
    # first start 1000 - 30 = 970, last end 1300: 330 s = 6 min; 380 s of job time
    assert run_page.run_time(jobs) == ("6 min from the first job's start to the last one's end; 3 jobs, 6 min of "
                                       "job time; the longest: first_token/infer_mine_t0.00 (3 min)")
    assert run_page.run_time([]).startswith("no benchmark files")


def test_page_shows_models_scorecard_then_the_runs_ledger():
    text = run_page.page("my-run", ["first_token", "followup"], {"mine": "local GGUF, 0.5B"}, {"mine": CARD},
                         LEDGER, "6 min")
    lines = text.splitlines()
    assert lines[0] == "# my-run" and "* `mine`: local GGUF, 0.5B" in lines
    assert text.index("## Scorecard") < text.index("### mine") < text.index("## Claims ledger")
    assert "# Scorecard: mine" not in text and "| first_token | mismatch |" in text
    assert "4 rows: 1 reproduced, 1 contradicted, 1 inconclusive, 1 not applicable (every row" in text
    assert "| every_prompt_declines | all | contradicted |" in text and "Time: 6 min." in text


def test_write_page_reads_benchmark_files(tmp_path):
    bench = tmp_path / "benchmarks" / "first_token"
    bench.mkdir(parents=True)
    (bench / "infer_mine_t0.00.tsv").write_text("s\th:m:s\tmax_rss\tcpu_time\n12.5\t0:00:12\t100\t11\n")
    (bench / "broken.tsv").write_text("nothing here\n")
    os.utime(bench / "infer_mine_t0.00.tsv", (2000, 2000))
    card = tmp_path / "mine.md"
    card.write_text(CARD)
    ledger = tmp_path / "findings.csv"
    ledger.write_text("study,claim,model,verdict,effect,ci_low,ci_high,unit,paper\n"
                      "first_token,mismatch_exists,mine,reproduced,0.4,0.3,0.5,share,8.4\n")
    out = tmp_path / "README.md"
    run_page.write_page(out, "my-run", ["first_token"], {"mine": "m"}, {"mine": card}, ledger, tmp_path / "benchmarks")
    text = out.read_text()
    assert "Time: 12 s from the first job's start to the last one's end; 1 job," in text
    assert "1 row: 1 reproduced" in text


def _dry_run(configfile: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(SNAKEMAKE), "-n", "--cores", "2", "--configfile", configfile], cwd=REPO,
                          capture_output=True, text=True, timeout=600)


def test_the_page_is_planned_for_a_named_run_only():
    named = _dry_run("configs/examples/hub.yaml")
    assert named.returncode == 0, named.stderr[-2000:]
    assert planned_jobs(named).get("run_page") == 1 and "results/mistral-7b/README.md" in named.stdout
    default = _dry_run("config.yaml")
    assert default.returncode == 0, default.stderr[-2000:]
    assert "run_page" not in planned_jobs(default) and "results/README.md" not in default.stdout
