"""What a cluster job asks for beyond memory (wobble.models.requests): time per attempt under a per-job cap, and the
GPU class its model needs."""

from __future__ import annotations

import pytest

from wobble.errors import WobbleError
from wobble.models import requests as R
from wobble.models.sizing import Size


def test_a_retry_asks_for_more_time_never_over_the_cap(monkeypatch):
    monkeypatch.delenv("WOBBLE_MAX_RUNTIME", raising=False)
    assert [R.attempt_runtime("probe", 100, a, retries=3) for a in (1, 2, 3)] == [100, 200, 300]
    assert R.attempt_runtime("first_token_infer", 2000, 2, retries=3) == 2880  # 48 h at most
    # resumable work over the cap runs as attempts of the cap each, when the profile allows enough of them
    assert R.attempt_runtime("followup_dialogues", 5960, 1, retries=3) == 2880
    with pytest.raises(WobbleError, match=r"needs 3 attempts and the profile allows 2 \(retries: 1\)"):
        R.attempt_runtime("followup_dialogues", 5960, 1, retries=1)
    with pytest.raises(WobbleError, match="starts again from nothing") as e:
        R.attempt_runtime("probe", 3000, 1, retries=3, job="probe dataset=mmlu")
    assert str(e.value).startswith("probe dataset=mmlu: estimated 3,000 minutes") and "\n" not in str(e.value)
    monkeypatch.setenv("WOBBLE_MAX_RUNTIME", "1440")
    assert R.attempt_runtime("probe", 1000, 2, retries=3) == 1440
    monkeypatch.setenv("WOBBLE_MAX_RUNTIME", "two days")
    with pytest.raises(WobbleError, match="WOBBLE_MAX_RUNTIME='two days'"):
        R.max_runtime()


CONFIG = {"models": {
    "7b": {"source": "hub", "params_b": 6.7},
    "70b": {"source": "hub", "params_b": 69, "device_map": "auto", "max_memory": {0: "70GiB", 1: "70GiB"}},
    "ft": {"finetune": {"base": "11b", "method": "full"}},
}, "instructions": {"finetune": {"deepspeed": {"zero_optimization": {"stage": 3}}}}}
SIZES = {"7b": Size(13.4e9, 6.7), "70b": Size(138e9, 69), "ft": Size(22.6e9, 11.3), "none": None}


def test_the_gpu_need_follows_the_model_and_the_constraint_the_sites_features(monkeypatch):
    need = R.gpu_need_gib(CONFIG, "first_token_infer", ["7b"], 1, SIZES)
    assert need == pytest.approx(13.4e9 / 2**30 * 1.25 + 2, abs=0.1)  # 17.6 GiB
    assert R.gpu_need_gib(CONFIG, "first_token_infer", ["70b"], 2, SIZES) == 72  # max_memory's budget + context
    assert R.gpu_need_gib(CONFIG, "first_token_infer", ["none"], 1, SIZES) is None
    # a full finetune of 11.3 B with ZeRO-3 on 4 ranks: 16 bytes a parameter / 4 = 42.1 GiB + 2
    assert R.gpu_need_gib(CONFIG, "finetune", ["ft"], 4, SIZES) == pytest.approx(44.1, abs=0.1)
    monkeypatch.delenv(R.FEATURES_ENV, raising=False)
    assert R.gpu_constraint(72) is None  # no site table: no constraint sent
    monkeypatch.setenv(R.FEATURES_ENV, "a100_40g=40, h100=80,a100_80g=80,l4=24")
    assert R.gpu_constraint(need) == "l4|a100_40g|a100_80g|h100"
    assert R.gpu_constraint(72) == "a100_80g|h100"
    assert R.gpu_constraint(None) is None
    with pytest.raises(WobbleError, match=r"first_token_infer model=x needs ~107 GiB per GPU; no GPU of"):
        R.gpu_constraint(107, "first_token_infer model=x")
    monkeypatch.setenv(R.FEATURES_ENV, "h100:80")
    with pytest.raises(WobbleError, match="is not FEATURE=GiB"):
        R.features()
