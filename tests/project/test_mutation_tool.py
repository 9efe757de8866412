"""The mutant generator of the mutation run (tests/tools/mutants.py): which changes it makes,
that it leaves docstrings and raise messages alone, that ids survive unrelated edits, and that a mutant,
applied, changes what the code computes."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

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
    assert _kinds(muts) == ["binop", "boolop", "compare", "constant", "delete", "early_return", "guard", "name",
                            "return", "unary"]
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


SEMANTIC = r'''
import re

WORD = re.compile(r"(?<![A-Za-z])[A-D](?!\w)")


def letter(text, options):
    if not text:
        return None
    words = [w.strip().lower() for w in options if w and w.isalpha()]
    hits = [m.group(0) for m in WORD.finditer(text)]
    return (hits, words, text[1:-1])


def window(tokens, i, k):
    return tokens[max(0, i - k):i + k + 1]


def prompt(head, shots):
    return head + "".join(f"{s}|" for s in shots)


def turns(head, shots):
    out = []
    for i, s in enumerate(shots):
        text = s
        if i == 0:
            text = head + text
        out.append(text)
    return out


def lines(head, shots):
    out = []
    out.append(head)
    for s in shots:
        if not s:
            continue
        out.append(s)
    return out
'''


def _semantic(kind):
    return [m for m in enumerate_mutants(SEMANTIC, "pkg/sem.py") if m.kind == kind]


def _run(mutant, name, *args):
    env: dict = {}
    exec(mutated_code(SEMANTIC, "sem.py", mutant), env)
    return env[name](*args)


def test_each_semantic_kind_is_generated_where_its_mistake_can_be_made():
    pairs = {k: sorted((m.before, m.after) for m in _semantic(k))
             for k in ("guard", "early_return", "filter", "strmethod", "regex", "slice", "repeat")}
    assert pairs["guard"] == [("if i == 0:\n    text = head + text", "text = head + text"),
                              ("w and w.isalpha()", "w"), ("w and w.isalpha()", "w.isalpha()")]
    assert pairs["early_return"] == [("if not text:\n    return None", "pass")]
    assert ("(_ for w in options if w and w.isalpha())", "(_ for w in options)") in pairs["filter"]
    assert ("if not s:\n    continue", "pass") in pairs["filter"]
    assert sorted(a for _, a in pairs["strmethod"]) == ["w", "w.strip()", "w.strip().lower()",
                                                         "w.strip().lower().strip()"]
    assert sorted(a for _, a in pairs["regex"]) == ["'(?<![A-Za-z])[A-D]'", "'[A-D](?!\\\\w)'"]
    assert ("text[1:-1]", "text[:-1]") in pairs["slice"] and ("text[1:-1]", "text[1:]") in pairs["slice"]
    assert ("text[1:-1]", "text[0:-1]") in pairs["slice"] and ("text[1:-1]", "text[1:-1 - 1]") in pairs["slice"]
    assert ("i - k", "i") in pairs["slice"] and ("i + k + 1", "i + k") in pairs["slice"]
    assert pairs["repeat"] == sorted([
        ("head + ''.join((f'{s}|' for s in shots))", "''.join((head + f'{s}|' for s in shots))"),
        ("out.append(head); for s in shots: ...", "for s in shots: out.append(head); ...")])


def test_each_semantic_mutant_changes_the_result_on_an_input_that_separates_them():
    def one(kind, after):
        return next(m for m in _semantic(kind) if m.after == after)

    # the empty-input exit removed: the empty text reaches text[1:-1] and the regex instead of returning None
    assert _run(one("early_return", "pass"), "letter", "", []) == ([], [], "")
    # the filter removed: "1990" is no longer refused as a candidate word
    assert _run(one("filter", "(_ for w in options)"), "letter", "x", ["1990"])[1] == ["1990"]
    # the lookbehind removed: the "D" of "Dogs" after a letter ("xD") reads as an option
    assert _run(one("regex", "'[A-D](?!\\\\w)'"), "letter", "xD", [])[0] == ["D"]
    # the window starts at the mask instead of around it
    toks = list("abcdefg")
    assert _run(next(m for m in _semantic("slice") if m.before == "i - k" and m.after == "i"),
                "window", toks, 3, 1) == ["d", "e"]
    # the head repeated per shot, and an appended head repeated on every turn
    assert _run(one("repeat", "''.join((head + f'{s}|' for s in shots))"), "prompt", "H:", ["a", "b"]) == "H:a|H:b|"
    assert _run(one("repeat", "for s in shots: out.append(head); ..."), "lines", "H", ["a", "b"]) == [
        "H", "a", "H", "b"]
    # the first-turn guard dropped: the head opens every turn, not only the first
    assert _run(one("guard", "text = head + text"), "turns", "H:", ["a", "b"]) == ["H:a", "H:b"]
    # the unmutated module: None, candidates, lookbehind kept, window around the mask, the head once
    env: dict = {}
    exec(compile(SEMANTIC, "sem.py", "exec"), env)
    assert env["letter"]("", []) is None and env["letter"]("xD", ["1990", "Ab"])[:2] == ([], ["ab"])
    assert env["window"](toks, 3, 1) == ["c", "d", "e"] and env["prompt"]("H:", ["a", "b"]) == "H:a|b|"
    assert env["lines"]("H", ["a", "", "b"]) == ["H", "a", "b"] and env["turns"]("H:", ["a", "b"]) == ["H:a", "b"]


def test_regex_edits_read_classes_and_escapes_and_remove_whole_lookarounds():
    from semantic_mutants import regex_edits

    assert regex_edits(r"^[\^$\]]\b(?=(x))\\$") == [
        ("^", r"[\^$\]]\b(?=(x))\\$"), (r"\b", r"^[\^$\]](?=(x))\\$"), ("(?=(x))", r"^[\^$\]]\b\\$"),
        ("$", r"^[\^$\]]\b(?=(x))\\")]
    assert regex_edits(r"[^]a](?P<n>b)(?<!c)") == [("(?<!c)", r"[^]a](?P<n>b)")]


def test_no_semantic_mutant_inside_a_raise_and_existing_ids_are_unchanged_by_them():
    src = 'def f(s, n):\n    if not s:\n        raise ValueError(s.strip()[:n])\n    return s\n'
    assert {m.kind for m in enumerate_mutants(src, "pkg/r.py")} == {"unary", "delete", "return"}
    # the syntactic mutants of SOURCE keep the ids the generator gave them before the semantic kinds existed,
    # so the equivalent-mutant list stays valid
    assert sorted(m.id for m in enumerate_mutants(SOURCE, "pkg/mod.py") if m.kind not in {"guard", "early_return"}) == [
        "062ca6a4ff", "192a6d01de", "23c9538e37", "30605c81b9", "47d994fc18", "83487db73e", "a0f785da30",
        "ab698455ca", "ccc7303404", "d0e04a650d"]


def test_scores_md_lists_each_modules_mutants_by_kind_and_marks_modules_not_run_or_changed():
    import mutate

    muts = _semantic("slice")[:3] + _semantic("regex")
    results = {muts[0].id: "killed", muts[1].id: "timeout", muts[2].id: "equivalent", muts[3].id: "survived",
               muts[4].id: "killed"}
    by_kind = mutate._by_kind(muts, results)
    assert by_kind == {"slice": {"total": 3, "killed": 2, "equivalent": 1, "survived": 0},
                       "regex": {"total": 2, "killed": 1, "equivalent": 0, "survived": 1}}
    first, second, third = list(mutate.TARGETS.items())[:3]
    source = (mutate.REPO / first[1][0]).read_text()
    summaries = {
        first[1][0]: {"module": first[1][0], "source_sha256": mutate._sha(source), "total": 5, "killed": 3,
                      "equivalent": 1, "survived": 1, "score": 75.0, "by_kind": by_kind},
        second[1][0]: {"module": second[1][0], "source_sha256": "0" * 64, "total": 0, "killed": 0, "equivalent": 0,
                       "survived": 0, "score": 100.0, "by_kind": {}},
    }
    md = mutate._markdown(summaries)
    assert f"| `{first[1][0]}` | 5 | 3 | 1 | 1 | 75.0 % |" in md
    assert f"| `{second[1][0]}` (source changed since) |" in md
    assert f"| `{third[1][0]}` | not yet run with the current kinds |" in md
    row = next(line for line in md.splitlines() if line.startswith(f"| `{first[0]}` |"))
    cells = dict(zip(mutate.KINDS, row.strip("| ").split(" | ")[1:]))
    assert cells["slice"] == "2/2 +1e" and cells["regex"] == "1/2" and cells["binop"] == "-"


def test_a_recheck_updates_only_the_retested_mutants_of_the_last_run():
    import mutate

    prev = {"module": "m.py", "total": 10, "killed": 6, "equivalent": 1, "survived": 3, "score": 66.7, "wall_s": 5.0,
            "by_kind": {"slice": {"total": 6, "killed": 3, "equivalent": 1, "survived": 2},
                        "regex": {"total": 4, "killed": 3, "equivalent": 0, "survived": 1}},
            "survivors": [{"id": "s1", "kind": "slice"}, {"id": "s2", "kind": "slice"}, {"id": "r1", "kind": "regex"}],
            "equivalent_ids": ["e1"]}
    # s1 is now killed, r1 is listed as equivalent, e1 was dropped from the list and is killed, s2 still survives
    fresh = {"_results": {"s1": "killed", "s2": "survived", "r1": "equivalent", "e1": "timeout"},
             "_kinds": {"s1": "slice", "s2": "slice", "r1": "regex", "e1": "slice"},
             "survivors": [{"id": "s2", "kind": "slice"}], "equivalent_ids": ["r1"], "wall_s": 1.0}
    out = mutate._recheck(prev, fresh)
    assert (out["killed"], out["equivalent"], out["survived"]) == (8, 1, 1)
    assert out["by_kind"] == {"slice": {"total": 6, "killed": 5, "equivalent": 0, "survived": 1},
                              "regex": {"total": 4, "killed": 3, "equivalent": 1, "survived": 0}}
    assert [s["id"] for s in out["survivors"]] == ["s2"] and out["equivalent_ids"] == ["r1"]
    assert out["score"] == round(100 * 8 / 9, 1) and out["wall_s"] == 6.0
    assert prev["by_kind"]["slice"]["killed"] == 3  # the last run's record is not changed in place
