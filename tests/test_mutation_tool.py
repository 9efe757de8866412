"""The mutant generator of the mutation run (tests/tools/mutants.py): which changes it makes,
that it leaves docstrings and raise messages alone, that ids survive unrelated edits, and that a mutant,
applied, changes what the code computes."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))

from mutants import enumerate_mutants, mutated_code  # noqa: E402

SOURCE = '''
def f(a, b, *, scale=2):
    """Docstring text."""
    if a < b and not b == 0:
        return max(a, b) + scale
    raise ValueError("message text")
'''


def _kinds(muts):
    return sorted({m.kind for m in muts})


def test_the_expected_kinds_of_change_and_nothing_in_docstrings_or_raise_messages():
    muts = enumerate_mutants(SOURCE, "pkg/mod.py")
    assert _kinds(muts) == ["binop", "boolop", "compare", "constant", "delete", "name", "return", "unary"]
    texts = [m.before for m in muts if m.kind == "constant"]
    assert not any("Docstring" in t or "message text" in t for t in texts), texts
    by_kind = {m.kind: m for m in muts}
    assert (by_kind["binop"].before, by_kind["binop"].after) == ("max(a, b) + scale", "max(a, b) - scale")
    assert by_kind["name"].after == "min" and by_kind["boolop"].after == "a < b or not b == 0"
    assert by_kind["delete"].before.startswith("raise ValueError") and by_kind["delete"].after == "pass"
    compares = sorted(m.after for m in muts if m.kind == "compare")
    assert compares == ["a <= b", "b != 0"]
    constants = sorted((m.before, m.after) for m in muts if m.kind == "constant")
    assert constants == [("0", "1"), ("2", "3")]  # the default 2 and the literal 0
    assert all(m.qualname == "f" and m.line >= 2 for m in muts)


def test_ids_are_unique_and_stable_when_unrelated_code_moves():
    first = enumerate_mutants(SOURCE, "pkg/mod.py")
    ids = [m.id for m in first]
    assert len(set(ids)) == len(ids) and all(len(i) == 10 for i in ids)
    assert [m.id for m in enumerate_mutants(SOURCE, "pkg/mod.py")] == ids
    shifted = enumerate_mutants("\n\nX = 1 + 1\n" + SOURCE, "pkg/mod.py")
    assert {m.id for m in shifted if m.qualname == "f"} == set(ids)
    assert {m.id for m in enumerate_mutants(SOURCE, "pkg/other.py")}.isdisjoint(ids)  # the module is in the id


def test_an_applied_mutant_changes_the_result_and_the_source_stays_unmutated():
    muts = {m.kind + ":" + m.after: m for m in enumerate_mutants(SOURCE, "pkg/mod.py")}
    env: dict = {}
    exec(compile(SOURCE, "mod.py", "exec"), env)
    assert env["f"](1, 3) == 5
    for key, want in (("binop:max(a, b) - scale", 1), ("name:min", 3), ("return:return None", None)):
        mutated: dict = {}
        exec(mutated_code(SOURCE, "mod.py", muts[key]), mutated)
        assert mutated["f"](1, 3) == want, key
    again: dict = {}
    exec(mutated_code(SOURCE, "mod.py", muts["compare:a <= b"]), again)
    assert again["f"](3, 3) == 5  # a <= b admits equal arguments; the original raises
