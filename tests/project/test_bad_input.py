"""Bad input gets one clear line: every row of the "Bad input" table in docs/reproducibility.md is a case here.

Each case feeds one bad input to the code that reads it and returns the error the user sees. The test checks it is
one of wobble's own errors (never a traceback from inside a library), on one line, naming the file / record / key
and what was expected (the row's pattern), and — where the case writes — that nothing was left behind that
Snakemake would take as a finished output. ``python tests/project/test_bad_input.py`` prints that table.
"""

from __future__ import annotations

import copy
import errno
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from wobble.errors import WobbleError  # noqa: E402

SMOKE = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())


def _config(edit):
    from wobble.config import validate_config

    cfg = copy.deepcopy(SMOKE)
    edit(cfg)
    validate_config(cfg, REPO / "schemas" / "config.schema.yaml")


def _jsonl(tmp, text: bytes | str, name="data.jsonl"):
    from wobble.io import read_jsonl

    p = tmp / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return read_jsonl(p)


def _annotated(tmp, **fields):
    from wobble.studies.first_token.classifiers import annotated_items

    rec = {"model": "m", "split": "test", "row": 1, "question_text": "q", "options_as_shown": ["a", "b"],
           "response": "A. a", "label_raw": "A. a", **fields}
    return annotated_items([{k: v for k, v in rec.items() if v is not None}], tmp / "annotated.jsonl")


def _gguf(tmp, monkeypatch, data_edit):
    from support import gguf_spec, make_wheel, no_pip

    from wobble.io import sha256_bytes
    from wobble.models import gguf as gg
    from wobble.models.materialize import materialize
    from wobble.models.tiny import write_tiny_gguf

    monkeypatch.setattr(gg.subprocess, "run", no_pip)
    write_tiny_gguf(tmp / "t.gguf", seed=0)
    data = (tmp / "t.gguf").read_bytes()
    shipped, sha = data_edit(data, sha256_bytes(data))
    make_wheel(tmp / "w", "tiny-one", "1.0", {"tiny_one/t.gguf": shipped})
    materialize("tiny", gguf_spec(["tiny-one"], "file", "tiny_one/t.gguf", sha), tmp / "models" / "tiny",
                wheel_dir=tmp / "w")


class _Garbage(BaseHTTPRequestHandler):
    reply = (200, b"<html>oops</html>")

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        code, body = _Garbage.reply
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _server(tmp, reply, call="generate"):
    from wobble.backends.base import GenParams
    from wobble.backends.openai_compat import OpenAICompatBackend

    _Garbage.reply = reply
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Garbage)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        b = OpenAICompatBackend(f"http://127.0.0.1:{srv.server_address[1]}/v1", "m", model_key="srv", progress=False,
                                max_retries=0)
        if call == "generate":
            b.generate(["hi"], GenParams(max_new_tokens=2))
        else:
            b.next_token_logprobs(["hi"], ["A", "B"])
    finally:
        srv.shutdown()
        srv.server_close()


def _disk_full(tmp, monkeypatch):
    from wobble import io

    real = io.os.fdopen

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()

        def write(self, s):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(io.os, "fdopen", lambda fd, *a, **k: Full(real(fd, *a, **k)))
    io.write_jsonl(tmp / "out" / "predictions.jsonl", [{"a": 1}])


def _superni(tmp, text):
    from wobble.metrics.superni import score_file

    (tmp / "pred.jsonl").write_text(text)
    score_file(tmp / "pred.jsonl")


def _extract(tmp, dataset, text):
    from wobble.studies.followup.extractors import extract_file

    (tmp / "replies.jsonl").write_text(text)
    list(extract_file(dataset, tmp / "replies.jsonl"))


def _partial(tmp, text):
    from wobble.runner.partial import load_partial

    (tmp / "p.jsonl.partial").write_text(text)
    load_partial(tmp / "p.jsonl")


def _models(**spec):
    return lambda c: c["models"].__setitem__("x", spec)


#: (id, the bad input, what triggers it, pattern of the one line the user sees)
CASES = [
    ("jsonl-malformed", "a JSONL line that is not JSON",
     lambda t, m: _jsonl(t, '{"a": 1}\n{"a": \n'), r"data\.jsonl: record line 2: a JSON object \(Expecting value"),
    ("jsonl-not-object", "a JSONL line holding a list, not an object",
     lambda t, m: _jsonl(t, "[1, 2]\n"), r"data\.jsonl: record line 1: a JSON object, got list"),
    ("jsonl-not-utf8", "non-UTF-8 bytes in a JSONL file",
     lambda t, m: _jsonl(t, b'{"a": "\xff"}\n'), r"data\.jsonl: record line 1: UTF-8 text \(byte 0xff at column 8"),
    ("json-syntax", "a JSON file with a syntax error",
     lambda t, m: (t / "x.json").write_text('{"a": 1,,}') and __import__("wobble.io").io.read_json(t / "x.json"),
     r"x\.json: record at line 1 column 9: valid JSON"),
    ("field-missing", "an annotated response without its 'response' field",
     lambda t, m: _annotated(t, response=None), r"annotated\.jsonl: record line 1: field 'response' of type str"),
    ("field-type", "a field of the wrong type (row number as text)",
     lambda t, m: _annotated(t, row="one"), r"annotated\.jsonl: record line 1: field 'row' of type int, got 'one'"),
    ("field-value", "an annotated split that is neither train nor test",
     lambda t, m: _annotated(t, split="dev"), r"annotated\.jsonl: record line 1: split 'train' or 'test', got 'dev'"),
    ("predictions-empty", "an empty predictions file given to `wobble score superni`",
     lambda t, m: _superni(t, ""), r"pred\.jsonl: record file: at least one prediction record \(the file is empty\)"),
    ("predictions-field", "a prediction without 'references'",
     lambda t, m: _superni(t, '{"task": "t", "prediction": "x"}\n'), r"pred\.jsonl: record line 1: field 'references' is missing"),
    ("extract-not-json", "`wobble extract` fed a line that is not JSON",
     lambda t, m: _extract(t, "gsm8k", '{"text": "Answer: 5"}\nnot json\n'), r"replies\.jsonl: record line 2: a JSON object"),
    ("extract-no-text", "`wobble extract` fed objects without 'text'",
     lambda t, m: _extract(t, "gsm8k", '{"txt": "5"}\n'), r"replies\.jsonl: record line 1: a JSON object with a string field 'text'"),
    ("extract-dataset", "`wobble extract` with an unknown dataset",
     lambda t, m: _extract(t, "gsm9k", '{"text": "5"}\n'), r"'extract DATASET': a followup dataset, one of \['gsm8k'"),
    ("partial-no-uid", "a killed run's partial file with a record lacking its uid",
     lambda t, m: _partial(t, '{"uid": "a"}\n{"x": 1}\n'), r"p\.jsonl\.partial: record line 2: field 'uid' in every record"),
    ("dialogue-empty", "a dialogue record with no turns",
     lambda t, m: __import__("wobble.studies.followup.metrics", fromlist=["x"]).score_dialogue(
         {"uid": "u1", "dataset": "gsm8k", "turns": []}), r"record u1: at least the initial reply in 'turns'"),
    ("scores-no-choice", "classifier scores with no evaluator flagged as chosen",
     lambda t, m: __import__("wobble.studies.first_token.classifiers", fromlist=["x"]).chosen_classifier(
         [{"evaluator": "a"}], "scores.jsonl"), r"scores\.jsonl: record \(all\): exactly one evaluator flagged 'selected'"),
    ("gguf-truncated", "a GGUF cut short in its wheel",
     lambda t, m: _gguf(t, m, lambda d, sha: (d[: len(d) // 2], sha)), r"'tiny'.*sha256"),
    ("gguf-sha256", "a wrong sha256 for the GGUF in the config",
     lambda t, m: _gguf(t, m, lambda d, sha: (d, "0" * 64)), r"'tiny'.*sha256"),
    ("model-undefined", "a study naming a model key nobody defines",
     lambda t, m: _config(lambda c: c["first_token"].__setitem__("models", ["nobody"])),
     r"'first_token\.models\[0\]': model key 'nobody' is not defined under 'models'"),
    ("study-unknown", "a config section for a study that does not exist",
     lambda t, m: _config(lambda c: c.__setitem__("mystudy", {})), r"unknown section\(s\) \['mystudy'\]; expected"),
    ("condition-unknown", "an unknown instructions perturbation",
     lambda t, m: _config(lambda c: c["instructions"].__setitem__("conditions", ["original", "shuffle_everything"])),
     r"'instructions\.conditions\[1\]': expected one of \['original'"),
    ("constraint-unknown", "an unknown first_token constraint level",
     lambda t, m: _config(lambda c: c["first_token"].__setitem__("constraints", ["extreme"])),
     r"'first_token\.constraints\[0\]': expected one of \['low'"),
    ("pair-unknown", "an unknown icl_bias dataset/feature pair",
     lambda t, m: _config(lambda c: c["icl_bias"].__setitem__("pairs", ["sa_nonsense"])),
     r"'icl_bias\.pairs\[0\]': unknown pair 'sa_nonsense'; expected one of"),
    ("intervention-unknown", "an unknown icl_bias intervention",
     lambda t, m: _config(lambda c: c["icl_bias"].__setitem__("interventions", ["magic"])),
     r"'icl_bias\.interventions\[0\]': expected one of \['verbalizer'"),
    ("benchmark-unknown", "an unknown followup benchmark",
     lambda t, m: _config(lambda c: c["followup"].__setitem__("datasets", ["gsm9k"])),
     r"'followup\.datasets\[0\]': expected one of \['gsm8k'"),
    ("mitigation-unknown", "an unknown followup mitigation",
     lambda t, m: _config(lambda c: c["followup"].__setitem__("mitigations", ["pray"])),
     r"'followup\.mitigations\[0\]': expected one of \['emotion_initial'"),
    ("variant-unknown", "an unknown followup prompt variant",
     lambda t, m: _config(lambda c: c["followup"].__setitem__("variants", ["D"])),
     r"'followup\.variants\[0\]': expected one of \['A', 'B', 'C'\], got 'D'"),
    ("config-type", "a number given as text in the config",
     lambda t, m: _config(lambda c: c["followup"].__setitem__("n_items", "ten")),
     r"'followup\.n_items': expected integer or null, got str 'ten'"),
    ("model-key-unknown", "a misspelt key in a model spec (an API key written into the config)",
     lambda t, m: _config(_models(source="openai", kind="causal", base_url="http://x", model="m", api_key="sk-1")),
     r"'models\.x': unknown key\(s\) \['api_key'\]; did you mean 'api_key_env'\? expected one of"),
    ("openai-no-url", "an openai model without base_url",
     lambda t, m: _config(_models(source="openai", kind="causal", model="m")), r"'models\.x': 'base_url' is required"),
    ("engine-wrong-source", "engine: llamacpp on a model that has no GGUF",
     lambda t, m: __import__("wobble.models.materialize", fromlist=["x"]).materialize(
         "h", {"source": "hub", "id": "a/b", "engine": "llamacpp"}, t / "h"), r"'models\.h\.engine': 'hf' for a hub model"),
    ("api-key-unset", "api_key_env naming a variable that is not set",
     lambda t, m: (m.delenv("WOBBLE_NO_SUCH_KEY", raising=False), __import__(
         "wobble.backends.openai_compat", fromlist=["x"]).OpenAICompatBackend(
         "http://127.0.0.1:9/v1", "m", model_key="srv", api_key_env="WOBBLE_NO_SUCH_KEY")),
     r"model 'srv': environment variable WOBBLE_NO_SUCH_KEY \(api_key_env\) is not set"),
    ("server-garbage", "a server answering HTML instead of JSON",
     lambda t, m: _server(t, (200, b"<html>oops</html>")), r"model 'srv': http://127\.0\.0\.1:\d+/v1/completions returned non-JSON"),
    ("server-no-choices", "a server answering JSON without choices",
     lambda t, m: _server(t, (200, b'{"id": 1}')), r"model 'srv': completions: response has no choices: \{'id': 1\}"),
    ("server-error", "a server failing with HTTP 500",
     lambda t, m: _server(t, (500, b'{"error": {"message": "boom"}}')), r"model 'srv': .*returned HTTP 500: boom"),
    ("perturb-unknown", "`wobble perturb` with an unknown condition",
     lambda t, m: __import__("wobble.studies.instructions.conditions", fromlist=["x"]).cli_perturb("shuffle_all", "t", seed=1),
     r"unknown instruction condition 'shuffle_all'; known: original"),
    ("disk-full", "the disk filling up while an output is written",
     lambda t, m: _disk_full(t, m), r"out/predictions\.jsonl: could not be written: No space left on device \(nothing was left"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gets_one_clear_line(case, tmp_path, monkeypatch):
    _, _, trigger, pattern = case
    with pytest.raises(WobbleError) as info:
        trigger(tmp_path, monkeypatch)
    message = str(info.value)
    assert "\n" not in message and re.search(pattern, message), message
    # nothing half-written that Snakemake would take as a finished output
    assert not list(tmp_path.rglob("*.tmp")) and not (tmp_path / "out" / "predictions.jsonl").exists()
    assert not (tmp_path / "models" / "tiny").exists()


def test_there_are_at_least_thirty_and_the_docs_list_each():
    assert len(CASES) >= 30 and len({c[0] for c in CASES}) == len(CASES)
    page = (REPO / "docs" / "reproducibility.md").read_text()
    assert table() in page, "docs/reproducibility.md's bad-input table is out of date: python tests/project/test_bad_input.py"


def _messages() -> dict[str, str]:
    return json.loads((REPO / "tests" / "fixtures" / "bad_input_messages.json").read_text())


def table() -> str:
    """The docs' table: the case id, the bad input, and the line the user sees (a recorded example)."""
    seen = _messages()
    lines = ["| case | bad input | what you see (one line; paths shortened) |", "|---|---|---|"]
    for cid, what, _, _ in CASES:
        lines.append(f"| `{cid}` | {what} | `{seen.get(cid, '')}` |")
    return "\n".join(lines)


def record_messages(tmp: Path) -> dict[str, str]:
    """Trigger every case once and keep its message, the temp directory shortened to ``…``."""
    import tempfile

    out = {}
    for cid, _, trigger, _ in CASES:
        d = Path(tempfile.mkdtemp(dir=tmp))
        mp = pytest.MonkeyPatch()
        try:
            trigger(d, mp)
            out[cid] = "(no error!)"
        except WobbleError as e:
            msg = str(e).replace(str(d) + "/", "…/").replace(str(d), "…")
            msg = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", msg)
            out[cid] = (msg if len(msg) <= 150 else msg[:149] + "…").replace("|", "\\|")
        finally:
            mp.undo()
    return out


if __name__ == "__main__":
    import tempfile

    (REPO / "tests" / "fixtures" / "bad_input_messages.json").write_text(
        json.dumps(record_messages(Path(tempfile.mkdtemp())), indent=1, ensure_ascii=False) + "\n")
    print(table())
