"""End to end: a ``source: openai`` model served by a real llama.cpp server (xllamacpp, in this process)
on 127.0.0.1, with a tiny random GGUF written here (ChatML template); the first_token study's infer
rule runs against it through snakemake on configs/smoke.yaml + one openai model key."""

from __future__ import annotations

import json
import socket
import time
import urllib.request

import pytest
import yaml

from conftest import REPO, copy_workflow, run_snakemake
from wobble.backends import GenParams
from wobble.backends.openai_compat import OpenAICompatBackend
from wobble.errors import WobbleError
from wobble.io import dumps_canonical
from wobble.models.tiny import write_tiny_gguf
from wobble.provenance import sidecar_path

pytestmark = pytest.mark.e2e
xlc = pytest.importorskip("xllamacpp", reason="xllamacpp (llama.cpp server) is not installed: pip install -e .[test]")

VOCAB = 259  # write_tiny_gguf's vocabulary: top_logprobs of its size makes every candidate's log-prob exact
KEY = "tiny-server"
#: The server demands this API key; the workflow reads it from the environment variable only, and a test greps
#: every file a run writes for it.
SECRET = "sk-wobble-test-5f1c0e"
KEY_ENV = "WOBBLE_TEST_SERVER_KEY"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    gguf = tmp_path_factory.mktemp("gguf") / "tiny-chat.gguf"
    write_tiny_gguf(gguf, seed=0)
    params = xlc.CommonParams()
    params.model.path = str(gguf)
    params.model_alias = "tiny-chat"
    params.hostnames = ["127.0.0.1"]
    params.port = free_port()
    params.use_jinja = True  # the GGUF's own chat template
    params.n_parallel = 1
    params.api_keys = [SECRET]
    params.endpoint_metrics = True  # /metrics: tokens processed, to count what a re-run asks
    params.n_ctx = 2048
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    server = xlc.Server(params)
    url = server.listening_address
    for _ in range(100):
        try:
            urllib.request.urlopen(f"{url}/health", timeout=1).read()  # /health needs no key
            break
        except OSError:
            time.sleep(0.1)
    else:
        pytest.fail(f"llama.cpp server at {url} did not become healthy")
    yield url
    del server


def served_tokens(url: str) -> tuple[float, float]:
    """(prompt tokens, predicted tokens) the server has processed so far, from its /metrics."""
    req = urllib.request.Request(f"{url}/metrics", headers={"Authorization": f"Bearer {SECRET}"})
    text = urllib.request.urlopen(req, timeout=5).read().decode()
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values["llamacpp:prompt_tokens_total"], values["llamacpp:tokens_predicted_total"]


def test_backend_against_llama_cpp(server_url):
    with pytest.raises(WobbleError, match="HTTP 401"):  # the server wants its key
        OpenAICompatBackend(server_url, "tiny-chat", model_key=KEY, progress=False,
                            max_retries=0).generate(["x"], GenParams(max_new_tokens=1))
    b = OpenAICompatBackend(server_url, "tiny-chat", model_key=KEY, top_logprobs=VOCAB, progress=False, api_key=SECRET)
    chat = [{"role": "user", "content": "Pick one.\nA. yes\nB. no\nAnswer:"}]
    lp = b.next_token_logprobs([chat, "Answer:"], ["A", "B"])
    assert all(set(row) == {"A", "B"} and all(v < 0 for v in row.values()) for row in lp)
    gens = b.generate([chat], GenParams(max_new_tokens=4))
    assert gens[0].rendered_prompt == dumps_canonical(chat) and isinstance(gens[0].text, str)
    assert gens == b.generate([chat], GenParams(max_new_tokens=4))  # greedy: the same answer twice
    with pytest.raises(WobbleError, match=r"not among the server's 2 returned next tokens \(top_logprobs=2\)"):
        OpenAICompatBackend(server_url, "tiny-chat", model_key=KEY, top_logprobs=2, api_key=SECRET,
                            progress=False).next_token_logprobs([chat], ["A", "B", "C", "D"])
    with pytest.raises(WobbleError, match="echo=True"):  # llama.cpp has no echo: no continuation log-probs
        b.continuation_logprobs(["Answer:"], [" A"])


def test_first_token_infer_rule_through_openai(server_url, tmp_path, mirror, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    smoke = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    models = {**smoke["models"], KEY: {"source": "openai", "kind": "causal", "base_url": server_url,
                                       "model": "tiny-chat", "top_logprobs": VOCAB, "concurrency": 2,
                                       "api_key_env": KEY_ENV}}
    copy_workflow(tmp_path, models=models)
    target = f"results/first_token/predictions/{KEY}/t0.00.jsonl"
    t0 = time.perf_counter()
    proc = run_snakemake(tmp_path, target, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    print(f"\nfirst_token infer via llama.cpp server: {time.perf_counter() - t0:.1f}s")
    first = (tmp_path / target).read_bytes()

    # a re-run of the job asks the server nothing: every request is answered from the on-disk cache
    before = served_tokens(server_url)
    proc = run_snakemake(tmp_path, target, "--forcerun", "first_token_infer", timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert served_tokens(server_url) == before
    assert (tmp_path / target).read_bytes() == first
    assert any((tmp_path / "resources" / "cache" / "openai" / KEY).rglob("*.json"))

    # the key is in no file the run wrote (results, logs, benchmarks, provenance, model manifest, cache)
    leaks = [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
             if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaks == [] and SECRET not in proc.stdout + proc.stderr

    model_dir = tmp_path / "resources" / "models" / KEY
    assert [p.name for p in model_dir.iterdir() if not p.name.startswith(".")] == ["wobble-model.json"]  # no weights
    assert json.loads((model_dir / "wobble-model.json").read_text())["source"] == "openai"
    recs = [json.loads(line) for line in (tmp_path / target).read_text().splitlines()]
    prompts = [json.loads(line) for line in (tmp_path / "results/first_token/splits/prompts.jsonl").read_text().splitlines()]
    assert len(recs) == len(prompts) > 0
    for r in recs:
        assert r["model"] == KEY and r["rendered_prompt"] == dumps_canonical(r["messages"])
        assert r["gen_params"]["temperature"] == 0.0 and r["gen_params"]["max_new_tokens"] == smoke["first_token"]["max_new_tokens"]
        assert isinstance(r["output"], str)
        assert set(r["first_token_logprobs"]) == set(r["letters"]) and r["first_token_letter"] in r["letters"]
    prov = json.loads(sidecar_path(tmp_path / target).read_text())
    assert prov["rule"] == "first_token_infer" and prov["models"] == {KEY: None}  # a server has no weights hash
