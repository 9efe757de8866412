"""The benchmark scripts run (``--quick``: a tiny random model, seconds) and their agreement columns hold;
no timing is asserted (speed is measured by running the scripts, see benchmarks/README.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_quick(script: str, tmp_path, timeout: int = 300, extra: tuple[str, ...] = ()) -> dict:
    """``benchmarks/<script> --quick --json [extra]``: its exit status must be 0; returns the JSON it wrote."""
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), "--quick", "--json", str(out), *extra],
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text())


def assert_repeated(row: dict, repeats: int, key: str = "s", ratio: str | None = "speedup") -> None:
    """A row timed by measure.py: the median of ``repeats`` interleaved runs between their min and max, each run's
    seconds and the foreign load beside it, the speed-up within the range the runs allow, the engine's instruction
    set and precision, and every run's outputs equal to the first's (the engines are deterministic)."""
    import statistics

    runs = row[f"{key}_runs"]
    assert row["repeats"] == repeats and len(runs) == repeats, row
    assert row[f"{key}_min"] <= row[key] <= row[f"{key}_max"] and row[key] == pytest.approx(statistics.median(runs),
                                                                                            abs=1e-3), row
    assert (row[f"{key}_min"], row[f"{key}_max"]) == pytest.approx((min(runs), max(runs)), abs=1e-3), row
    assert row["foreign_load_max_cores"] >= 0, row
    if ratio:
        low, high = row[f"{ratio}_range"]
        assert 0 < low <= row[ratio] <= high, row
    assert row["isa_precision"].startswith("torch ") and ", " in row["isa_precision"], row
    assert row["repeats_identical"] == f"{repeats}/{repeats}", row


def assert_run_facts(meta: dict, repeats: int) -> None:
    """measure.py's meta: the repeats, no load limit and no refused timing under --quick, the machine, torch's
    instruction set and precision."""
    assert meta["repeats"] == repeats and meta["max_foreign_load_cores"] is None and not meta["machine_loaded"]
    assert meta["machine"]["cores"] >= 1 and meta["machine"]["cpu"]
    assert meta["engines"]["torch"]["isa"] and meta["engines"]["torch"]["dtype"]


def test_icl_scoring_benchmark_quick_agrees_with_the_float32_reference(tmp_path):
    res = run_quick("bench_icl_scoring.py", tmp_path,
                    extra=("--attention", "wobble", "--all-positions-baseline", "--repeats", "2"))
    meta = res["meta"]
    assert meta["items"] == 12 and meta["quick"] and meta["repeats"] == 2 and not meta["machine_loaded"]
    # the baseline reads one position and computes the output layer only there: the same log-probs
    check = meta["per_item_last_position_vs_full_forward"]
    assert check["items"] == 4 and check["max_abs_dlogprob"] < 1e-5
    assert meta["machine"]["cores"] >= 1 and meta["engines"]["torch"]["dtype"] == "float32"
    engines = [r["engine"] for r in res["rows"]]
    assert engines == ["plain transformers, per-item forward, last position's logits only",
                       "plain transformers, per-item forward, logits at every position (not a fair baseline)",
                       "wobble hf, batched, no prefix reuse",
                       "wobble hf, exact prefix reuse", "wobble hf, exact prefix reuse, float32 output layer",
                       "wobble hf, exact prefix reuse, float32 output layer, attention wobble"]
    for r in res["rows"]:  # float32 everywhere in --quick: every engine equals the reference
        assert r["max_abs_dlogprob_vs_fp32"] < 1e-4 and r["argmax_agree_vs_fp32"] == "12/12", r
        assert r["items_per_s"] > 0 and r["speedup_vs_per_item"] > 0 and r["isa_precision"].startswith("torch ")
        assert r["repeats"] == 2 and len(r["seconds_runs"]) == 2 and r["seconds_min"] <= r["seconds"] <= r["seconds_max"]
        low, high = r["speedup_vs_per_item_range"]
        assert low <= r["speedup_vs_per_item"] <= high
    assert res["rows"][0]["speedup_vs_per_item"] == 1.0 and res["rows"][1]["max_abs_dlogprob_vs_last_position_only"] < 1e-5


def test_engines_benchmark_quick_agrees_with_the_float32_reference(tmp_path):
    """bench_engines.py --quick: a float32 tiny GGUF, so every engine's greedy texts equal the reference and
    llama.cpp's letter log-probs are within 5e-3 nats of it (see test_models' llamacpp test)."""
    import pytest

    pytest.importorskip("xllamacpp")
    res = run_quick("bench_engines.py", tmp_path, timeout=600,
                    extra=("--output-fp32", "--phases", "--prefix-reuse", "--full-vocab", "--top-k", "2"))
    assert res["meta"]["prompts"] == 6 and res["meta"]["quick"] and res["meta"]["repeats"] == 1
    assert res["meta"]["engines"]["llama.cpp"]["isa"] and res["meta"]["engines"]["llama.cpp"]["file_type"]
    engines = [(r["engine"], r["workload"]) for r in res["rows"]]
    assert engines[0] == ("transformers generate, one prompt at a time", "generation")
    assert ("wobble hf, batched (16, float32), float32 output layer", "letter scoring") in engines
    assert ("llama.cpp (xllamacpp), 2 slot(s)", "letter scoring") in engines
    # llama.cpp scores from the top 2 alternatives, asking for the whole vocabulary only where a letter is not
    # among them (with 4 letters: every prompt); the same values as the whole vocabulary every time
    for k in (1, 2):
        top_k, = (r for r in res["rows"] if (r["engine"], r["workload"]) == (f"llama.cpp (xllamacpp), {k} slot(s)",
                                                                              "letter scoring"))
        full, = (r for r in res["rows"] if r["engine"] == f"llama.cpp (xllamacpp), {k} slot(s), whole vocabulary on "
                                                          "every prompt")
        assert top_k["top_logprobs"] == 2 and top_k["prompts_asked_again_whole_vocabulary"] == 6, top_k
        assert full["top_logprobs"] == 259 and full["prompts_asked_again_whole_vocabulary"] == 0, full
        # a prompt asked again is re-run from the server's cached prompt, and llama.cpp's rounding depends on the
        # batch: on this random model the same prompt asked twice for the whole vocabulary moves up to 1.6e-3 nats
        assert full["max_abs_dlogprob_vs_top_k"] < 5e-3 and top_k["server_prompt_tokens"] > 0, full
        assert top_k["isa_precision"].startswith("llama.cpp ")
    # --prefix-reuse: the quick prompts' shared instruction block runs once; its generation row only
    reuse = [r for r in res["rows"] if "shared-prefix reuse" in r["engine"]]
    assert [r["workload"] for r in reuse] == ["generation"] and reuse[0]["prefix_passes"] == 1, reuse
    for r in res["rows"]:
        if r["workload"] == "generation":
            assert r["texts_equal_fp32"] == "6/6" and r["new_tokens_per_s"] > 0, r
        else:
            assert r["max_abs_dlogprob_vs_fp32"] < 5e-3 and r["argmax_agree_vs_fp32"] == "6/6", r
    # --phases: the hf rows split their time by phase, the llama.cpp rows carry the server's own timings
    hf = [r for r in res["rows"] if r["engine"].startswith("wobble hf") and r["workload"] == "generation"]
    for r in hf:
        assert r["prefill_empty_cache_positions"] > 0 and r["decode_step_calls"] > 0, r
        assert r["decode_step_positions"] >= r["decode_step_calls"] and r["outside_forward_s"] >= 0, r
    lc = [r for r in res["rows"] if r["engine"].startswith("llama.cpp") and r["workload"] == "generation"]
    assert lc and all(r["server_prompt_tokens"] > 0 and r["server_predicted_tokens"] > 0 for r in lc), lc


def test_generation_prefix_benchmark_quick_reuses_each_block_and_agrees_with_the_plain_path(tmp_path):
    res = run_quick("bench_generation_prefix.py", tmp_path, extra=("--per-group", "--phases", "--repeats", "2"))
    assert res["meta"]["prompts"] == 9 and res["meta"]["quick"]
    assert_run_facts(res["meta"], 2)
    plain, fast, per_group = res["rows"]
    for r in res["rows"]:
        assert_repeated(r, 2)
    assert plain["speedup"] == 1.0 and plain["isa_precision"].endswith(", float32")
    assert plain["prefix_passes"] == 0 and fast["prefix_passes"] == per_group["prefix_passes"] == 3  # 3 blocks
    for r in (fast, per_group):
        assert r["texts_equal_plain"] == "9/9" and r["max_abs_dlogprob_vs_plain"] < 1e-4
        assert r["new_tokens_per_s"] > 0 and r["speedup"] > 0
    # --phases: the reuse rows run suffixes on top of the blocks' caches, the plain row only whole prompts
    assert plain["prefill_continuing_a_cache_positions"] == 0 < plain["prefill_empty_cache_positions"]
    assert fast["prefill_continuing_a_cache_positions"] > 0 and per_group["prefill_continuing_a_cache_positions"] > 0


def test_dialogue_reuse_benchmark_quick_continues_every_later_turn_and_agrees(tmp_path):
    res = run_quick("bench_dialogue_reuse.py", tmp_path,
                    extra=("--phases", "--attention", "sdpa", "wobble", "--repeats", "2"))
    assert res["meta"]["dialogues"] == 6 and res["meta"]["quick"]
    assert_run_facts(res["meta"], 2)
    plain, fast, plain_w, fast_w = res["rows"]
    for r in res["rows"]:  # each run starts afresh (its own output file, empty caches): the same replies each time
        assert_repeated(r, 2)
    # the wobble attention kernel (float32 here): the same replies as sdpa, re-encoded or continued
    assert plain_w["engine"] == "wobble hf (wobble), whole conversation re-encoded each turn"
    assert plain_w["replies_equal_first"] == "24/24" and plain_w["max_abs_dlogprob_vs_first"] < 1e-4
    assert fast_w["replies_equal_plain"] == "24/24" and fast_w["prompts_continued"] == 18 + 2
    assert plain["replies"] == fast["replies"] == 24  # 6 dialogues x 4 turns
    # turns 2-4 of each dialogue (18), and the first turns of the second call's 2 dialogues, which start with
    # the shared system prompt the first call's dialogues kept
    assert plain["prompts_continued"] == 0 and fast["prompts_continued"] == 18 + 2
    assert fast["replies_equal_plain"] == "24/24" and fast["max_abs_dlogprob_vs_plain"] < 1e-4
    assert fast["replies_per_s"] > 0 and fast["speedup"] > 0
    # --phases: both run the shared system prompt once and decode the same replies step by step; on top of it the
    # plain path re-encodes each whole conversation, the reuse path only each new user turn
    assert plain["prefill_empty_cache_positions"] == fast["prefill_empty_cache_positions"] > 0
    assert plain["decode_step_positions"] == fast["decode_step_positions"] > 0
    assert plain["prefill_continuing_a_cache_positions"] > fast["prefill_continuing_a_cache_positions"] > 0
    for r in (plain, fast):
        assert 0 <= r["outside_forward_pct"] <= 100 and r["decode_step_s"] > 0, r


def test_lmeval_benchmark_quick_runs_both_engines_on_every_request(tmp_path):
    import pytest

    pytest.importorskip("lm_eval")  # the optional "bench" extra
    res = run_quick("bench_lmeval.py", tmp_path, extra=("--repeats", "2"))
    meta, rows = res["meta"], res["rows"]
    assert meta["requests"] == 24 and meta["quick"] and meta["engines"]["lm-eval"] == "0.4.13"
    assert_run_facts(meta, 2)
    assert [r["engine"] for r in rows] == ["lm-eval 0.4 HFLM, logits cache on", "lm-eval 0.4 HFLM, logits cache off",
                                           "wobble hf (exact prefix reuse)"]
    for r in rows:
        assert r["requests_per_s"] > 0 and r["isa_precision"].endswith(", float32"), r
        assert_repeated(r, 2, "seconds", "speedup_vs_lmeval_cache_on")
        low, high = r["speedup_vs_lmeval_cache_off_range"]
        assert low <= r["speedup_vs_lmeval_cache_off"] <= high, r
    assert rows[0]["speedup_vs_lmeval_cache_on"] == rows[1]["speedup_vs_lmeval_cache_off"] == 1.0
    assert meta["slowest_lmeval_s"] == max(rows[0]["seconds"], rows[1]["seconds"])
    assert rows[1]["argmax_agree_vs_lmeval"] == "12/12"  # lm-eval with and without its cache: the same scores


def test_prefill_benchmark_quick_reports_a_share_of_the_matmul_throughput(tmp_path):
    res = run_quick("bench_prefill.py", tmp_path, extra=("--profile", "5", "--reps", "2"))
    assert res["tokens"] == 64 and res["batch"] == 2 and res["layer_shapes"]
    assert_run_facts(res, 2)
    assert res["isa_precision"].startswith("torch ") and res["isa_precision"].endswith(", float32")
    for key in ("prefill_s", "matmul_s"):  # interleaved rounds: each run's seconds, the median between min and max
        assert res["repeats"] == len(res[f"{key}_runs"]) == 2 and res[f"{key}_min"] <= res[key] <= res[f"{key}_max"]
    low, high = sorted(res["share_of_matmul_runs"])  # the ratio of the medians lies between the rounds' shares
    assert low - 1e-3 <= res["share_of_matmul"] <= high + 1e-3
    assert res["matmul_gflops"] > 0 and res["prefill_gflops"] > 0 and 0 < res["attention_flops_share"] < 1
    prof = res["profile"]
    assert 1 <= len(prof) <= 5 and any(r["op"].startswith("aten::") for r in prof)
    assert all(0 <= r["share"] <= 1 for r in prof) and prof == sorted(prof, key=lambda r: -r["self_s"])
    assert res["share_of_matmul"] > res["share_linear_only"] > 0


def test_numerics_compares_dialogue_replies_turn_by_turn(tmp_path):
    """bench_numerics counts a prediction as changed when its text changed: a record's ``output``, or for a
    followup dialogue every turn's ``output`` (those records have no top-level output)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_numerics import compare_predictions, replies

    def dialogue(uid, *texts):
        return {"uid": uid, "turns": [{"output": t, "answer": "x"} for t in texts]}

    a, b = tmp_path / "a" / "m", tmp_path / "b" / "m"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    (a / "d.jsonl").write_text("\n".join(json.dumps(r) for r in [dialogue("1", "No", "Yes"), dialogue("2", "No")]))
    (b / "d.jsonl").write_text("\n".join(json.dumps(r) for r in [dialogue("1", "No", "No"), dialogue("2", "No")]))
    (a / "g.jsonl").write_text(json.dumps({"uid": "3", "output": "A"}))
    (b / "g.jsonl").write_text(json.dumps({"uid": "3", "output": "B"}))
    res = compare_predictions(tmp_path / "a", tmp_path / "b")
    assert (res["records"], res["text_changed"]) == (3, 2)
    assert res["per_file"]["m/d.jsonl"] == {"records": 2, "text_changed": 1}
    assert replies({"output": "A"}) == ["A"] and replies(dialogue("4", "p", "q")) == ["p", "q"]


def test_attention_benchmark_quick_compares_the_kernels_on_the_same_prompts(tmp_path):
    res = run_quick("bench_attention.py", tmp_path, extra=("--kernels", "sdpa", "eager", "wobble", "--rounds", "2"))
    assert res["meta"]["prompts"] == 9 and res["meta"]["quick"] and res["meta"]["rounds"] == 2
    assert_run_facts(res["meta"], 2)
    sdpa, eager, ours = res["rows"]
    for r in res["rows"]:
        assert_repeated(r, 2)
    assert ours["texts_equal_sdpa"] == "9/9" and ours["max_abs_dlogprob_vs_sdpa"] < 1e-4
    assert (sdpa["engine"], eager["engine"]) == ("wobble hf, attention sdpa", "wobble hf, attention eager")
    assert sdpa["speedup"] == 1.0 and eager["speedup"] > 0 and eager["new_tokens_per_s"] > 0
    assert eager["texts_equal_sdpa"] == "9/9" and eager["max_abs_dlogprob_vs_sdpa"] < 1e-4  # float32: same model


def test_finetune_head_benchmark_quick_gives_the_same_loss_and_gradients(tmp_path):
    res = run_quick("bench_finetune_head.py", tmp_path, extra=("--repeats", "2"))
    meta, rows = res["meta"], res["rows"]
    assert_run_facts(meta, 2)
    for r in rows:  # each way's losses and gradients bit-identical in both runs
        assert_repeated(r, 2, "seconds")
        assert r["train_tokens_per_s"] > 0 and r["target_tokens_per_s"] > 0
    assert rows[0]["isa_precision"].endswith(" weights")  # --quick: no bf16 autocast
    assert meta["batches"] == 2 and meta["target_tokens"] > 0 and meta["tokens"] > 5 * meta["target_tokens"]
    assert meta["max_abs_loss_diff"] < 1e-5 and meta["max_abs_grad_diff"] < 1e-6
    assert [r["output_layer"] for r in rows] == ["all positions", "target positions"] and rows[0]["speedup"] == 1.0


def test_followup_groups_benchmark_quick_asks_each_run_as_alone(tmp_path):
    """bench_followup_groups.py --quick: config.yaml's StrategyQA group asked run by run and as one set by a tiny
    float32 model; the set gives every dialogue the runs alone give (as the runner's tests show byte for byte)."""
    res = run_quick("bench_followup_groups.py", tmp_path, extra=("--repeats", "2"))
    meta, (alone, joint) = res["meta"], res["rows"]
    assert_run_facts(meta, 2)
    for r in (alone, joint):  # each run in fresh output folders: the same dialogues both times
        assert_repeated(r, 2, "s", "speedup_vs_first")
        assert len(r["cpu_s_runs"]) == 2 and r["cpu_s"] > 0
    assert alone["speedup_vs_first"] == 1.0 and alone["s_minus_first"] == alone["cpu_s_minus_first"] == 0.0
    assert meta["quick"] and meta["model"] == "tiny" and meta["items"] == 6 and len(meta["runs"]) >= 2
    n = 6 * len(meta["runs"])
    assert (alone["engine"], joint["engine"]) == ("alone", "set") and alone["dialogues"] == joint["dialogues"] == n
    assert joint["replies"] == alone["replies"] > n
    assert joint["dialogues_identical_to_first"] == f"{n}/{n}" and joint["s"] > 0


def test_followup_groups_benchmark_quick_measures_the_group_without_the_neutral_control(tmp_path):
    """bench_followup_groups.py --engines set_without_control set: the group with and without wobble's neutral control
    (one run of 6 dialogues: 12 replies recorded, the first answer of each shared with the plain runs); the other
    runs' dialogues compared over the runs both asked."""
    res = run_quick("bench_followup_groups.py", tmp_path, extra=("--engines", "set_without_control", "set"))
    meta, (without, joint) = res["meta"], res["rows"]
    assert "direct_NA_none" in meta["runs"] and (without["engine"], joint["engine"]) == ("set_without_control", "set")
    assert joint["runs"] == without["runs"] + 1 == len(meta["runs"])
    assert joint["dialogues"] == without["dialogues"] + 6 and joint["replies"] == without["replies"] + 12
    assert joint["dialogues_identical_to_first"] == f"{without['dialogues']}/{without['dialogues']}"
    assert joint["s_minus_first"] == pytest.approx(joint["s"] - without["s"], abs=0.011)
    assert joint["cpu_s_minus_first"] == pytest.approx(joint["cpu_s"] - without["cpu_s"], abs=0.011)
    assert joint["repeats"] == 1 and len(joint["s_runs"]) == 1 and meta["repeats"] == 1  # --quick: one run


@pytest.mark.parametrize("study, extra", [
    ("first_token", ("--models", "tiny-causal", "tiny-t5")),
    ("followup", ("--models", "tiny-causal", "--dataset", "multiarith", "--precondition-items", "2")),
    ("instructions", ("--models", "tiny-causal-ni", "tiny-t5")),
    ("icl_bias", ("--models", "tiny-causal", "--pair", "boolq_answer_qword")),
])
def test_reference_costs_benchmark_quick_times_each_study_on_a_runs_own_items(tmp_path, smoke_run, study, extra):
    """bench_reference_costs.py --quick on the session's smoke run (its config, prompts, items, bundles and tiny
    models): one row per model with CPU seconds and the ratio to the first model, and the study's precondition
    computed from the same outputs."""
    res = run_quick("bench_reference_costs.py", tmp_path,
                    extra=(study, "--run", str(smoke_run), "--config", str(smoke_run / "run.yaml"), "--items", "2",
                           *extra))
    meta, rows = res["meta"], res["rows"]
    models = [m for m in extra[1:] if m.startswith("tiny")]
    assert meta["quick"] and meta["study"] == study and meta["models"] == models and meta["repeats"] == 1
    assert [r["model"] for r in rows] == models and set(meta["loads"]) == set(models)
    assert rows[0]["cpu_cost_ratio_vs_first"] == 1.0 and all(r["cpu_s_per_item"] > 0 for r in rows)
    pre = [r["precondition"] for r in rows]
    if study == "first_token":  # 2 questions x the smoke run's 2 levels x 2 shuffles
        assert rows[0]["items"] == 8 and all(set(p["not_opening_with_first_token_letter"]) == {"medium", "example"}
                                             for p in pre)
    elif study == "followup":  # MultiArith's answers are open: chance 0; the precondition's 2 seeded items
        (fu,) = pre
        assert set(fu) == {"multiarith"} and fu["multiarith"]["chance"] == 0.0
        assert fu["multiarith"]["initially_correct"].endswith("/2") and isinstance(fu["multiarith"]["meets"], bool)
        return
    elif study == "instructions":
        assert all(p["tasks_above_0"].endswith("/2") for p in pre)
    else:  # every scored condition of the pair, calibrated
        assert all(p["constant_cells"].endswith("/7") for p in pre)
    assert all(isinstance(p["meets"], bool) for p in pre)


def test_a_timing_taken_while_other_processes_ran_is_not_reported():
    """measure.py: a timing's median, spread, rates and ratios, and ``LOADED`` in place of every number made from a
    run during which other processes used more of the CPUs than allowed."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    import measure

    quiet, busy = measure.Timing(0.2), measure.Timing(0.2)
    quiet.runs, quiet.foreign = [2.0, 1.0, 4.0], [0.0, 0.1, 0.05]
    busy.runs, busy.foreign = [1.0, 1.0, 1.0], [0.0, 0.9, 0.0]
    assert quiet.row("s") == {"s": 2.0, "s_min": 1.0, "s_max": 4.0, "repeats": 3, "s_runs": [2.0, 1.0, 4.0],
                              "foreign_load_max_cores": 0.1}
    assert quiet.rate(10) == 5.0 and quiet.ratio(quiet) == {"speedup": 1.0, "speedup_range": [0.25, 4.0]}
    assert busy.loaded and busy.row("s")["s"] == measure.LOADED and busy.row("s")["s_runs"] == [1.0, 1.0, 1.0]
    assert busy.rate(10) == measure.LOADED and quiet.ratio(busy)["speedup"] == measure.LOADED
    with measure.ForeignLoad() as load:
        sum(range(10 ** 5))
    assert load.cores >= 0
    t = measure.Timing(float("inf"))
    assert t.measure(lambda: 7) == 7 and len(t.runs) == 1 and not t.loaded


def test_engines_are_timed_round_by_round_and_their_repeated_outputs_counted():
    """measure.interleave: A1 B1 A2 B2 A3 B3 (with ``alternate``: A1 B1 B2 A2 A3 B3), each engine's first output,
    and how many of its runs gave it again; ``Timing.minus`` and ``cpu_row`` beside ``row``."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    import measure

    order = []

    def engine(name, outputs):
        it = iter(outputs)
        return name, lambda timing: timing.measure(lambda: order.append(name) or next(it))

    timings, first, identical = measure.interleave([engine("A", [1, 1, 1]), engine("B", [5, 6, 5])], 3, float("inf"))
    assert order == ["A", "B"] * 3 and first == {"A": 1, "B": 5} and identical == {"A": "3/3", "B": "2/3"}
    assert all(len(t.runs) == len(t.cpu) == 3 for t in timings.values())
    order.clear()
    measure.interleave([engine("A", [1, 2]), engine("B", [3, 3])], 2, float("inf"), alternate=True)
    assert order == ["A", "B", "B", "A"]
    quiet, busy = measure.Timing(0.2), measure.Timing(0.2)
    quiet.runs, quiet.foreign, quiet.cpu = [2.0, 1.0, 4.0], [0.0, 0.0, 0.0], [1.5, 1.0, 3.0]
    busy.runs, busy.foreign, busy.cpu = [1.0, 1.0, 1.0], [0.0, 0.9, 0.0], [1.0, 1.0, 1.0]
    assert quiet.minus(busy) == {"s_minus_first": measure.LOADED} and quiet.minus(quiet) == {"s_minus_first": 0.0}
    assert busy.cpu_row() == {"cpu_s": 1.0, "cpu_s_runs": [1.0, 1.0, 1.0]}  # CPU time: reported under load too
    assert quiet.cpu_row("c")["c"] == 1.5


def test_the_re_measuring_shell_scripts_parse():
    for script in ("run_fair_baselines.sh", "run_repeats.sh"):
        proc = subprocess.run(["bash", "-n", str(REPO / "benchmarks" / script)], capture_output=True, text=True)
        assert proc.returncode == 0, (script, proc.stderr)


def test_job_times_sums_a_runs_benchmark_files_per_study(tmp_path):
    """job_times.py: Snakemake benchmark files grouped by their first folder, wall and CPU seconds summed, the
    largest peak memory and the longest jobs; a file without Snakemake's columns stops it with one line naming it."""
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    jobs = {"first_token/infer_a.tsv": (100.5, 2048, 90.0), "first_token/infer_b.tsv": (20.0, 512, 19.5),
            "models/m.tsv": (30.0, 4096, 10.0), "findings.tsv": (1.0, 100, "NA")}
    for rel, (s, rss, cpu) in jobs.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(header + f"{s}\t0:00:00\t{rss}\t0\t0\t0\t0\t0\t0\t{cpu}\n")
    out = tmp_path / "times.json"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "job_times.py"), str(tmp_path), "--top", "2",
                           "--json", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = {r["group"]: r for r in json.loads(out.read_text())["rows"]}
    assert list(rows) == ["first_token", "models", "(top level)", "all"]  # by summed wall time, then the total
    ft = rows["first_token"]
    assert (ft["jobs"], ft["wall_s"], ft["cpu_s"], ft["max_rss_gib"]) == (2, 120.5, 109.5, 2.0)
    assert ft["largest"] == [{"job": "first_token/infer_a", "s": 100.5}, {"job": "first_token/infer_b", "s": 20.0}]
    assert rows["(top level)"]["cpu_s"] == 0.0  # Snakemake's NA: nothing measured
    assert (rows["all"]["jobs"], rows["all"]["wall_s"], rows["all"]["cpu_s"], rows["all"]["max_rss_gib"]) == (
        4, 151.5, 119.5, 4.0)
    assert "| first_token | 2 | 120 | 110 | 2.0 | first_token/infer_a: 100; first_token/infer_b: 20 |" in proc.stdout

    (tmp_path / "models" / "m.tsv").write_text("seconds\n3\n")
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "job_times.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "models/m.tsv" in proc.stderr
    assert "missing s, max_rss, cpu_time" in proc.stderr
