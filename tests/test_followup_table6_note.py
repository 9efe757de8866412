"""Table 6's note names the prompt variants ours averages (wobble.studies.followup.tables.prompts_ran)."""

from wobble.studies.followup.tables import prompts_ran


def test_the_note_names_one_prompt_several_or_none():
    assert prompts_ran(["A", "A"]).startswith("prompt A only (followup.variants)")
    assert prompts_ran(["C", "A", "B", "A"]) == "prompts A, B, C"
    assert prompts_ran([]) == "none: this run has no mitigation rows"
