"""`wobble pin-revisions`: unpinned hub models of a config get the sha their branch points at, nothing else moves."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml

from wobble.config import check_pinned_revisions
from wobble.errors import WobbleError
from wobble.models.revisions import pin_file, rewrite, unpinned_revisions

ROOT = Path(__file__).resolve().parents[2]


def fake_sha(repo: str, revision: str) -> str:
    return hashlib.sha1(f"{repo}@{revision}".encode()).hexdigest()


def test_the_paper_config_is_pinned_in_place_with_only_revision_values_changed(tmp_path):
    path = tmp_path / "paper.yaml"
    shutil.copy(ROOT / "configs/paper.yaml", path)
    before = path.read_text().splitlines()
    loose = unpinned_revisions(yaml.safe_load(path.read_text()))
    pins = pin_file(path, fake_sha)
    assert set(pins) == set(loose)
    after_text = path.read_text()
    after = yaml.safe_load(after_text)
    assert unpinned_revisions(after) == {}
    check_pinned_revisions({**after, "scale": "paper"})
    for key, (revision, sha) in pins.items():
        assert after["models"][key]["revision"] == sha == fake_sha(after["models"][key]["id"], revision)
    changed = [(a, b) for a, b in zip(before, after_text.splitlines()) if a != b]
    assert len(after_text.splitlines()) == len(before) and len(changed) == len(pins)
    for a, b in changed:  # each changed line differs only in the revision's value
        assert a.replace("revision: ", "") != b and "revision:" in a and "revision:" in b


def test_an_anchored_revision_keeps_its_anchor_and_its_aliases_follow():
    text = ("models:\n"
            "  big: {source: hub, id: org/big, revision: &big-rev main, kind: causal}\n"
            "  served:\n"
            "    source: openai\n"
            "    server: {command: [vllm, serve, org/big, --revision, *big-rev]}\n"
            "  small: {source: hub, id: org/small, revision: v1.0}\n")
    out = rewrite(text, {"big": ("main", "a" * 40), "small": ("v1.0", "b" * 40)})
    doc = yaml.safe_load(out)
    assert "&big-rev " + "a" * 40 in out
    assert doc["models"]["served"]["server"]["command"][-1] == "a" * 40
    assert doc["models"]["small"]["revision"] == "b" * 40


def test_a_model_whose_name_is_a_prefix_of_another_is_not_confused_with_it():
    text = ("models:\n"
            "  llama: {source: hub, id: org/llama, revision: main}\n"
            "  llama-chat: {source: hub, id: org/llama-chat, revision: main}\n")
    out = rewrite(text, {"llama-chat": ("main", "c" * 40)})
    doc = yaml.safe_load(out)
    assert doc["models"]["llama"]["revision"] == "main" and doc["models"]["llama-chat"]["revision"] == "c" * 40


def test_a_hub_failure_is_one_line_naming_the_model_and_the_file_is_left_unchanged(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("models:\n  m: {source: hub, id: org/m, revision: main}\n")

    def offline(repo, revision):
        raise OSError("Network is unreachable\nmore detail")

    with pytest.raises(WobbleError, match=r"^models\.m: cannot resolve org/m@main .*Network is unreachable$"):
        pin_file(path, offline)
    assert path.read_text() == "models:\n  m: {source: hub, id: org/m, revision: main}\n"


def test_an_answer_that_is_not_a_sha_is_refused(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("models:\n  m: {source: hub, id: org/m, revision: main}\n")
    with pytest.raises(WobbleError, match="not a 40-hex sha"):
        pin_file(path, lambda repo, rev: "main")


def test_an_already_pinned_config_is_not_touched(tmp_path):
    path = tmp_path / "c.yaml"
    text = f"models:\n  m: {{source: hub, id: org/m, revision: {'d' * 40}}}\n  g: {{source: gguf}}\n"
    path.write_text(text)
    assert pin_file(path, lambda repo, rev: pytest.fail("no model should be resolved")) == {}
    assert path.read_text() == text
