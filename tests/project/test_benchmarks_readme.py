"""benchmarks/README.md stays short and true: at most 300 lines, the summary table first with short cells, every
record it cites present and every record beside the scripts cited (the rest in archive/), no Snakemake timing
files or mutation scores beside the scripts, and every figure it shows equal, at the precision shown, to the JSON
record (or the committed Snakemake benchmarks) it comes from."""

from __future__ import annotations

import fnmatch
import itertools
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks"
README = (BENCH / "README.md").read_text(encoding="utf-8")
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:e-\d+)?(?![\w])")


def _expand(name: str) -> list[str]:
    """``a-{x,y}-b{1,2}`` -> every combination (the README's brace form for a family of records)."""
    parts = re.split(r"\{([^}]*)\}", name)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(c) for c in itertools.product(*choices)]


def _cited(text: str) -> set[str]:
    return {n for m in re.findall(r"`([^`\s*]+\.json)`", text) for n in _expand(m.split("/")[-1])}


def _summary() -> list[list[str]]:
    """The summary table's rows (header and rule left out), as cells."""
    section = README.split("## Summary", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", r)[1:-1]] for r in rows[2:]]


def test_the_readme_is_at_most_300_lines_and_opens_with_the_summary_table():
    assert len(README.splitlines()) <= 300
    headings = re.findall(r"^## (.+)$", README, re.MULTILINE)
    assert headings[0] == "Summary"
    assert README.index("| engine feature |") < README.index("\n## ", README.index("## Summary"))
    rows = _summary()
    assert len(rows) >= 12
    for cells in rows:  # one short line per engine feature: ratio, baseline, command, machine, record
        assert len(cells) == 6, cells
        assert all(0 < len(c) <= 160 for c in cells), [c for c in cells if len(c) > 160]
        assert "×" in cells[1] or "%" in cells[1], cells
        assert ".py" in cells[3] and "EPYC" in cells[4] or "H200" in cells[4], cells


def test_every_cited_record_is_here_and_every_record_here_is_cited():
    here = {p.name for p in BENCH.glob("*.json")}
    cited = _cited(README)
    assert cited <= here, sorted(cited - here)
    assert here <= cited, f"records no figure cites belong in benchmarks/archive/: {sorted(here - cited)}"
    archived = {p.name for p in (BENCH / "archive").glob("*.json")}
    assert archived and not archived & cited
    described = (BENCH / "archive" / "README.md").read_text(encoding="utf-8")
    patterns = [n for m in re.findall(r"`([^`\s]+\.json)`", described) for n in _expand(m)]
    assert all(any(fnmatch.fnmatch(a, p) for p in patterns) for a in archived), archived


def test_no_run_timings_or_mutation_scores_beside_the_scripts():
    from wobble.paths import benchmark_dir

    assert not [p for p in BENCH.rglob("*.tsv")] and not (BENCH / "mutation").exists()
    assert (REPO / "tests" / "mutation" / "scores.md").is_file()
    assert benchmark_dir({"results_root": "results"}) == "results/benchmarks"


def test_the_reference_runs_job_table_is_job_times_output_on_its_committed_benchmarks():
    proc = subprocess.run([sys.executable, str(BENCH / "job_times.py"), str(REPO / "results/reference/benchmarks"),
                           "--top", "1"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    table = [line for line in proc.stdout.splitlines() if line.startswith("|")]
    assert len(table) > 5 and all(line in README for line in table), [line for line in table if line not in README]


# ------------------------------------------------------------------------------------- figures vs records

def _rows(name: str) -> list[dict]:
    return json.loads((BENCH / name).read_text())["rows"]


def _row(name: str, **match) -> dict:
    (row,) = [r for r in _rows(name) if all(r.get(k) == v for k, v in match.items())]
    return row


def _secs(row: dict, key: str = "s") -> tuple[float, float, float]:
    return row[key], row[f"{key}_min"], row[f"{key}_max"]


def _speed(base: dict, row: dict, key: str = "s") -> tuple[float, float, float]:
    """base's median over row's, and the range the runs allow (slowest base / fastest row, the other way round)."""
    return base[key] / row[key], base[f"{key}_min"] / row[f"{key}_max"], base[f"{key}_max"] / row[f"{key}_min"]


def _counts(text: str) -> tuple[int, int]:
    k, n = text.split("/")
    return int(k), int(n)


ENGINE_TABLE = [(engine, workload) for workload, engines in (
    ("generation", ["transformers generate, one prompt at a time", "wobble hf, batched (32, auto)",
                    "wobble hf, batched (32, auto), float32 output layer",
                    "wobble hf, batched (32, auto), shared-prefix reuse, float32 output layer",
                    "llama.cpp (xllamacpp), 1 slot(s)", "llama.cpp (xllamacpp), 4 slot(s)"]),
    ("letter scoring", ["wobble hf, batched (32, auto)", "wobble hf, batched (32, auto), float32 output layer",
                        "llama.cpp (xllamacpp), 1 slot(s)", "llama.cpp (xllamacpp), 4 slot(s)"])) for engine in engines]


def _figures():
    """(text shown in the README, the values its numbers show, in order)."""
    icl = "icl-scoring-gemma-n48-fair.json"
    per_item = _row(icl, engine="plain transformers, per-item forward, last position's logits only")
    for engine, s_text, x_text in [
            ("wobble hf, batched, no prefix reuse", "94.6 (90.4–97.3)", "0.84× (0.82–0.89×)"),
            ("wobble hf, exact prefix reuse", "6.45 (6.08–6.45)", "12.4× (12.4–13.2×)"),
            ("wobble hf, exact prefix reuse, float32 output layer", "7.15 (7.01–7.38)", "**11.2×** (10.8–11.4×)"),
            ("wobble hf, exact prefix reuse, float32 output layer, attention wobble", "6.08 (5.69–6.20)",
             "13.1× (12.8–14.1×)")]:
        r = _row(icl, engine=engine)
        yield s_text, _secs(r, "seconds")
        yield x_text, _speed(per_item, r, "seconds")
        yield f"| {r['max_abs_dlogprob_vs_fp32']:.3f} | {r['argmax_agree_vs_fp32']} |", (
            r["max_abs_dlogprob_vs_fp32"], *_counts(r["argmax_agree_vs_fp32"]))
    yield "79.9 (79.7–80.1)", _secs(per_item, "seconds")

    lm = "lmeval-gemma-n24.json"
    on, off, ours = (_row(lm, engine=e) for e in ("lm-eval 0.4 HFLM, logits cache on",
                                                  "lm-eval 0.4 HFLM, logits cache off", "wobble hf (exact prefix reuse)"))
    yield "159.1 (153.6–162.1)", _secs(on, "seconds")
    yield "320.2 (316.5–324.0)", _secs(off, "seconds")
    yield "0.50× (0.47–0.51×)", _speed(on, off, "seconds")
    yield "11.2 (10.6–12.0)", _secs(ours, "seconds")
    yield "**14.2× (12.8–15.3×)**", _speed(on, ours, "seconds")
    yield "**14.2×** (12.8–15.3×); Δ ≤ 3.4e-6", (*_speed(on, ours, "seconds"), ours["max_abs_dll_vs_lmeval"])

    for model, texts in {
        "smollm2": ["21.9 (20.4–22.5) | 1.0× | 57/64", "6.49 (6.46–7.39) | 3.38× | 58/64", "6.88 (6.54–7.91) | 3.19× | 58/64",
                    "**4.39** (3.60–4.40) | **5.0×** | 58/64", "12.0 (11.5–13.9) | 1.83× | 49/64",
                    "12.4 (11.7–12.5) | 1.77× | 55/64", "2.61 (2.60–3.24) | 1.0× | Δ 0.22, 57/64",
                    "**3.23** (2.74–3.23) | 0.81× | Δ 0.17, **61/64**", "8.87 (8.70–9.08) | 0.29× | Δ 0.23, 54/64",
                    "9.07 (8.94–9.51) | 0.29× | Δ 0.23, 56/64"],
        "qwen": ["23.2 (22.6–26.4) | 1.0× | 58/64", "16.2 (15.7–17.3) | 1.43× | 58/64", "17.6 (17.1–17.6) | 1.32× | 63/64",
                 "**7.78** (7.42–7.87) | **2.99×** | 62/64", "19.0 (18.2–19.8) | 1.22× | 61/64",
                 "20.0 (20.0–20.3) | 1.16× | 60/64", "6.79 (6.60–7.20) | 1.0× | Δ 0.083, 54/64",
                 "**7.30** (7.29–7.47) | 0.93× | Δ 0.062, **61/64**", "17.0 (17.0–17.2) | 0.40× | Δ 0.15, 61/64",
                 "16.9 (16.5–17.0) | 0.40× | Δ 0.14, 62/64"]}.items():
        by = {(r["engine"], r["workload"]): r for r in _rows(f"engines-{model}-n64-fair.json")}
        for key, text in zip(ENGINE_TABLE, texts, strict=True):
            r = by[key]
            agree = (r["texts_equal_fp32"] if r["workload"] == "generation" else r["argmax_agree_vs_fp32"])
            delta = () if r["workload"] == "generation" else (r["max_abs_dlogprob_vs_fp32"],)
            yield text, (*_secs(r), r["speedup"], *delta, *_counts(agree))
    yield "SmolLM2 **2.75×** (2.69–3.32×), Qwen **2.31×** (2.20–2.33×)", (
        *_speed(*_pick("smollm2", "letter scoring")), *_speed(*_pick("qwen", "letter scoring")))
    yield "SmolLM2 **5.0×** (4.62–6.24×), Qwen **2.99×** (2.87–3.56×)", (
        *_speed(*_pick("smollm2", "anchor")), *_speed(*_pick("qwen", "anchor")))
    yield "SmolLM2 **2.74×** (2.61–3.86×), Qwen **2.44×** (2.31–2.67×)", (
        *_speed(*_pick("smollm2", "generation")), *_speed(*_pick("qwen", "generation")))
    yield "letter scoring 0.81× (SmolLM2) and 0.93× (Qwen), generation 0.94× and 0.92×, ICL scoring 0.90×", (
        *(_cost(m, "letter scoring") for m in ("smollm2", "qwen")), *(_cost(m, "generation") for m in ("smollm2", "qwen")),
        _row(icl, engine="wobble hf, exact prefix reuse")["seconds"]
        / _row(icl, engine="wobble hf, exact prefix reuse, float32 output layer")["seconds"])
    fp = {(r["engine"], r["workload"]): r for r in _rows("engines-qwen-output-fp32.json")}
    yield "letter-scoring argmax 28/32 → 32/32, texts 31/32 → 32/32", (
        *_counts(fp["wobble hf, batched (32, auto)", "letter scoring"]["argmax_agree_vs_fp32"]),
        *_counts(fp["wobble hf, batched (32, auto), float32 output layer", "letter scoring"]["argmax_agree_vs_fp32"]),
        *_counts(fp["wobble hf, batched (32, auto)", "generation"]["texts_equal_fp32"]),
        *_counts(fp["wobble hf, batched (32, auto), float32 output layer", "generation"]["texts_equal_fp32"]))

    gp = "generation-prefix-qwen-w-exam-mixed.json"
    plain, mixed, grouped = (_row(gp, engine=e) for e in (
        "wobble hf, batched, no prefix reuse", "wobble hf, shared-prefix reuse",
        "wobble hf, shared-prefix reuse, one batch per prefix group"))
    yield "216.4 (215.8–219.4) | 1.0× | 36,915 | 86", (*_secs(plain), 1.0, plain["prefill_empty_cache_positions"],
                                                      plain["decode_step_calls"])
    for r, text in ((grouped, "99.8 (99.8–101.7) | 2.17× (2.12–2.20×) | 5,507 + 7,433 | 277 | 63/67"),
                    (mixed, "**81.6 (81.0–83.9)** | **2.65× (2.57–2.71×)** | 6,701 + 7,262 | 97 | 61/67")):
        yield text, (*_secs(r), *_speed(plain, r), r["prefill_empty_cache_positions"],
                     r["prefill_continuing_a_cache_positions"], r["decode_step_calls"], *_counts(r["texts_equal_plain"]))
    g_plain, g_reuse = _rows("generation-prefix-gemma-ni-w-exam-mixed.json")
    yield "47.4 s plain vs 71.9 s with reuse", (g_plain["s"], g_reuse["s"])
    yield "**0.66×** (0.63–0.68×)", _speed(g_plain, g_reuse)

    for model, text in (("smollm2", "226.8 (224.1–227.8) | 101.8 (98.2–102.3) | **2.23× (2.19–2.32×)** | 379/400"),
                        ("qwen", "399.0 (381.9–404.0) | 144.0 (139.6–147.3) | **2.77× (2.59–2.89×)** | 389/400")):
        re_enc, kept = _rows(f"dialogue-reuse-{model}-n100.json")
        yield text, (*_secs(re_enc), *_secs(kept), *_speed(re_enc, kept), *_counts(kept["replies_equal_plain"]))
    chunk = {f"{m}-c{c}": _speed(*_rows(f"dialogue-chunk-{m}-c{c}-n20.json")) for m in ("qwen", "smollm2")
             for c in (8, 32)}
    yield "Qwen **2.67× (2.65–2.70×)** against 2.45× at 8", (*chunk["qwen-c32"], chunk["qwen-c8"][0], 8)
    yield "SmolLM2 **2.56× (2.45–2.71×)** against 1.60×", (*chunk["smollm2-c32"], chunk["smollm2-c8"][0])

    alone, joint = _rows("followup-groups-smollm2-strategyqa.json")
    yield "93.9 s (91.6–100.5), as one set 65.1 s (64.0–65.6), **1.44× (1.40–1.57×)**", (
        *_secs(alone), *_secs(joint), *_speed(alone, joint))
    groups = json.loads((BENCH / "followup-control-cost.json").read_text())["groups"]
    without, with_ = (sum(_engine(g, e)["s"] for g in groups) for e in ("set_without_control", "set"))
    diffs = [_engine(g, "set")["s"] - _engine(g, "set_without_control")["s"] for g in groups]
    yield "729.9 s without the control, 769.8 s with it, **+39.8 s (+5.5 %)**; per group +0.8 s to +10.1 s", (
        without, with_, with_ - without, 100 * (with_ / without - 1), min(diffs), max(diffs))
    yield "**+5.5 %** (729.9 s → 769.8 s over 8 groups)", (100 * (with_ / without - 1), without, with_, len(groups))

    every, target = _rows("finetune-head-gemma-n4.json")
    yield "36.7 s (36.1–36.8), only where a target\nis predicted 16.0 s (15.9–16.0), **2.30× (2.26–2.31×)**", (
        *_secs(every, "seconds"), *_secs(target, "seconds"), *_speed(every, target, "seconds"))

    runs = json.loads((BENCH / "prefill-gemma-attention.json").read_text())["runs"]
    share = {k: [100 * r["share_of_matmul"] for r in runs if r["attention"] == k] for k in ("sdpa", "wobble")}
    secs = {k: [r["prefill_s"] for r in runs if r["attention"] == k] for k in share}
    pairs = [a / b for a, b in zip(secs["sdpa"], secs["wobble"])]
    yield "**62 %** (60.5–64.5 %)", (statistics.median(share["sdpa"]), min(share["sdpa"]), max(share["sdpa"]))
    yield "70 % (69–76 %)", (statistics.median(share["wobble"]), min(share["wobble"]), max(share["wobble"]))
    yield "1.87 s (1.84–2.14), 62 % | 1.66 s (1.56–1.69)", (
        statistics.median(secs["sdpa"]), min(secs["sdpa"]), max(secs["sdpa"]), statistics.median(share["sdpa"]),
        statistics.median(secs["wobble"]), min(secs["wobble"]), max(secs["wobble"]))
    yield "1.11× (1.11–1.37×)", (statistics.median(pairs), min(pairs), max(pairs))
    gflops = [r["matmul_gflops"] for r in runs]
    yield "bf16 matmuls at 326–397 GFLOP/s on 2 threads", (min(gflops), max(gflops), runs[0]["threads"])
    for name, text in (("attention-gemma-w-exam-wobble.json", "17.7 s (16.7–18.3) | 16.3 s (14.3–16.7) | 1.08× (1.00–1.28×)"),
                       ("attention-gemma-ni-english-w-exam.json",
                        "13.2 s (12.8–13.3) | eager 13.8 s (13.5–14.9) | **0.96× (0.86–0.98×)**")):
        sdpa, other = _rows(name)
        yield text, (*_secs(sdpa), *_secs(other), *_speed(sdpa, other))
    for name, text in (("dialogue-attention-smollm2-n100.json", "107.4 s (99.6–113.0) | 112.0 s (106.9–120.5) | 0.96× (0.83–1.06×)"),
                       ("dialogue-attention-qwen-n32.json", "45.4 s (44.1–45.8) | 43.5 s (43.4–47.3) | 1.04× (0.93–1.05×)")):
        by = {r["engine"]: r for r in _rows(name)}
        sdpa, ours = (by[f"wobble hf ({k}), previous turns' KV cache kept"] for k in ("sdpa", "wobble"))
        yield text, (*_secs(sdpa), *_secs(ours), *_speed(sdpa, ours))

    for name, text in (("numerics-first_token-threads1.json", "| 1,600 | 0 (0.0 %) | 0/1,600 | 0/5 |"),
                       ("numerics-first_token-float32.json", "| 1,600 | 213 (13.3 %) | 143/1,600 | 0/5 |")):
        rec = json.loads((BENCH / name).read_text())
        p = rec["predictions"]
        yield text, (p["records"], p["text_changed"], 100 * p["text_changed_share"], p["argmax_flipped"], p["records"],
                     rec["verdicts_changed"], len(rec["verdicts"]))
    rec = json.loads((BENCH / "numerics-followup-float32.json").read_text())
    p = rec["predictions"]
    yield "| 448 dialogues | 65 (14.5 %) | – | 0/6 |", (p["records"], p["text_changed"], 100 * p["text_changed_share"],
                                                       rec["verdicts_changed"], len(rec["verdicts"]))

    cpu = {(r["study"], r["model"]): r for r in _rows("gpu-throughput-cpu.json")}
    gpu = {(r["study"], r["model"]): r for r in _rows("gpu-throughput-h200.json")}
    gpu.update({(r["study"], r["model"]): r for r in _rows("gpu-throughput-h200-sampling.json")
                if r["study"] == "followup"})
    for key, text in ((("icl_bias", "gemma-3-270m"), "| 48 | 0.299 (0.299–0.302) | 6.95 | **23×** |"),
                      (("first_token", "smollm2-135m"), "| 32 | 1.70 (1.70–1.89) | 12.2 | **7.1×** |"),
                      (("first_token", "qwen2.5-coder-0.5b"), "| 32 | 1.57 (1.43–1.59) | 26.2 | **17×** |"),
                      (("instructions", "gemma-3-270m"), "| 23 | 2.83 (2.70–2.83) | 19.8 | **7.0×** |"),
                      (("followup", "smollm2-135m"), "| 32 | 16.8 (16.0–17.9) | 202 | **12×** |")):
        g, c = gpu[key], cpu[key]
        yield text, (g["items"], *_secs(g), c["s_min"], c["s_min"] / g["s"])


def _engine(group: dict, name: str) -> dict:
    (row,) = [r for r in group["rows"] if r["engine"] == name]
    return row


def _pick(model: str, workload: str) -> tuple[dict, dict]:
    """(llama.cpp's fastest slot count, the study's engine) on first_token's workload; ``anchor``: (one prompt at a
    time, the study's engine) on generation."""
    rows = _rows(f"engines-{model}-n64-fair.json")
    if workload == "anchor":
        return rows[0], _pick(model, "generation")[1]
    llama = min((r for r in rows if r["engine"].startswith("llama.cpp") and r["workload"] == workload),
                key=lambda r: r["s"])
    ours = "wobble hf, batched (32, auto), " + ("shared-prefix reuse, float32 output layer"
                                                if workload == "generation" else "float32 output layer")
    (study,) = [r for r in rows if r["engine"] == ours and r["workload"] == workload]
    return llama, study


def _cost(model: str, workload: str) -> float:
    by = {(r["engine"], r["workload"]): r for r in _rows(f"engines-{model}-n64-fair.json")}
    return (by["wobble hf, batched (32, auto)", workload]["s"]
            / by["wobble hf, batched (32, auto), float32 output layer", workload]["s"])


def _shown(text: str, value: float) -> bool:
    """``value`` rounds to ``text`` at the precision ``text`` shows (a half step either way)."""
    plain = text.replace(",", "")
    if "e-" in plain:
        mantissa, exp = plain.split("e-")
        step = 10 ** (-int(exp) - len(mantissa.partition(".")[2]))
    else:
        step = 10 ** -len(plain.partition(".")[2])
    return abs(float(plain) - value) <= step / 2 + 1e-9


@pytest.mark.parametrize("text, values", list(_figures()),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_each_figure_shown_equals_its_record(text, values):
    assert text in README, f"not in benchmarks/README.md: {text!r}"
    shown = NUMBER.findall(text.replace("*", ""))
    assert len(shown) == len(values), (shown, values)
    wrong = [(s, round(v, 4)) for s, v in zip(shown, values) if not _shown(s, v)]
    assert not wrong, f"{text!r}: shown vs record {wrong}"
