"""README is a short manual in a fixed order, and what it says about results and samples comes from the ledgers
and the config, never typed by hand."""

from __future__ import annotations

import re

import yaml

from conftest import REPO
from wobble.report.readme import END, START, results_block

README = (REPO / "README.md").read_text(encoding="utf-8")
ORDER = ["The two commands", "Read the results", "Regenerate one table", "Run your own model", "Run on SLURM",
         "Resume after a kill", "Audit a number", "What is bit-reproducible, and what is not", "Layout", "Tests",
         "Add a study", "Known deviations"]


def test_readme_is_at_most_250_lines():
    assert len(README.splitlines()) <= 250


def test_sections_come_in_the_manuals_order():
    assert re.findall(r"^## (.+)$", README, flags=re.M) == ORDER


def test_the_results_block_is_generated_from_the_committed_ledgers():
    """Regenerate with `python -m wobble.report.readme README.md`."""
    assert README.split(START, 1)[1].split(END, 1)[0] == "\n" + results_block(REPO)


def test_known_deviations_state_the_default_configs_samples():
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    deviations = README.split("## Known deviations", 1)[1].replace("\n", " ")
    assert f"{config['first_token']['n_questions']} of 414 questions" in deviations
    assert f"{len(config['icl_bias']['pairs'])} of the 22 pairs" in deviations
    assert f"{len(config['followup']['datasets'])} of the 8 benchmarks, {config['followup']['n_items']} items" in deviations


def test_license_and_citation_credit_the_four_papers():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    titles = " ".join(r["title"] for r in cff["references"])
    for words in ("Robustness of Learning from Task Instructions", "My Answer is C",
                  "Inductive Biases of In-Context Learning", "Ask Again, Then Fail"):
        assert words in titles
    assert (REPO / "LICENSE").is_file()
