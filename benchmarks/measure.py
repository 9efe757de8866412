"""What makes a timing in benchmarks/ worth reporting, shared by the bench scripts that use it:

* the machine and each engine's instruction set and precision (``machine``, ``torch_engine``,
  ``llamacpp_engine``; ``label`` makes the short form "llama.cpp AVX2, Q4_1" / "torch AVX512-BF16, bf16");
* every timing repeated, reported as its median with the spread (``Timing``: ``--repeats``, at least 3 for a
  number that goes into a README), the engines interleaved round by round by the caller so that a drift of the
  machine touches all of them alike;
* no number from a loaded machine: during each timed run the CPU time that *other* processes (and the
  hypervisor, as steal time) took on the CPUs this process may use is measured from ``/proc/stat``
  (``ForeignLoad``); a timing with a run above ``--max-foreign-load`` cores on average is reported as
  ``LOADED`` instead of a number, and so is every rate and ratio made from it.

Speed-ups are the ratio of medians, with the range the runs allow (slowest base / fastest engine .. the other
way round) beside it. ``interleave`` runs the engines of one workload round by round and says how many of each
engine's runs gave the first run's outputs (``repeats_identical``: a deterministic engine gives "3/3").
"""

from __future__ import annotations

import argparse
import math
import operator
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")

LOADED = "machine loaded: not reported"
DEFAULT_REPEATS = 3
DEFAULT_MAX_FOREIGN_LOAD = 0.2  # cores' worth of other processes' CPU time, on average over one timed run
ISA_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16",
             "amx_tile", "amx_bf16", "amx_int8")


def add_arguments(ap: argparse.ArgumentParser, *aliases: str) -> None:
    """``--repeats`` (also under ``aliases``: a script's own older name, e.g. ``--reps``) and
    ``--max-foreign-load`` (a script's ``--quick`` sets neither: see ``settings``)."""
    ap.add_argument("--repeats", *aliases, dest="repeats", type=int, default=None,
                    help=f"timed runs per engine, interleaved; median and spread reported (default "
                         f"{DEFAULT_REPEATS}; 1 with --quick)")
    ap.add_argument("--max-foreign-load", type=float, default=None,
                    help=f"refuse a timing when other processes used more than this many cores on average during "
                         f"one of its runs (default {DEFAULT_MAX_FOREIGN_LOAD}; no limit with --quick)")


def settings(args) -> tuple[int, float]:
    """``(repeats, max foreign load)`` from ``add_arguments``' options; ``--quick`` (a check that the script
    works, on a test machine that may be busy) defaults to one run and no load limit."""
    quick = getattr(args, "quick", False)
    repeats = args.repeats if args.repeats is not None else (1 if quick else DEFAULT_REPEATS)
    limit = args.max_foreign_load if args.max_foreign_load is not None else (
        math.inf if quick else DEFAULT_MAX_FOREIGN_LOAD)
    return max(1, int(repeats)), float(limit)


# ------------------------------------------------------------------------------------------- the machine

def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cpus() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))


def machine() -> dict:
    """The CPU (model, the cores this process may use, its vector instruction sets) and the load average now."""
    flags = cpu_flags()
    return {"cpu": _cpu_model(), "cores": len(_cpus()), "cpu_isa": [f for f in ISA_FLAGS if f in flags],
            "loadavg_at_start": _loadavg(), "python": platform.python_version()}


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def torch_engine(dtype, output_fp32: bool = False) -> dict:
    """How torch computes here: its version, the vector ISA its kernels dispatch to, whether its bf16 matmuls
    have native bf16 instructions (oneDNN uses AVX512-BF16 or AMX-BF16 when the CPU has them), the dtype (with
    ``output_fp32``: "<dtype> body, float32 output layer", the model spec's ``output_fp32: true``)."""
    import torch

    flags = cpu_flags()
    dtype = str(dtype).replace("torch.", "")
    isa = torch.backends.cpu.get_cpu_capability()
    if dtype == "bfloat16":
        isa += "-AMX-BF16" if "amx_bf16" in flags else "-BF16" if "avx512_bf16" in flags else " (no native bf16)"
    return {"engine": "torch", "version": torch.__version__, "isa": isa,
            "dtype": f"{dtype} body, float32 output layer" if output_fp32 else dtype,
            "threads": torch.get_num_threads()}


def gguf_quantization(path: str | os.PathLike) -> dict:
    """A GGUF's file type (``general.file_type``, e.g. Q4_1; else its most common tensor type) and how many
    tensors of each type it holds."""
    import collections

    import gguf

    reader = gguf.GGUFReader(str(path))
    field = reader.get_field("general.file_type")
    file_type = None
    if field is not None:
        try:
            file_type = gguf.LlamaFileType(int(field.contents())).name.replace("MOSTLY_", "")
        except ValueError:
            file_type = str(field.contents())
    types = collections.Counter(t.tensor_type.name for t in reader.tensors).most_common()
    if file_type is None and types:  # a GGUF without the field: its most common tensor type
        file_type = types[0][0]
    return {"file_type": file_type, "tensor_types": dict(types)}


def llamacpp_engine(gguf_path: str | os.PathLike | None = None) -> dict:
    """How llama.cpp computes here: the xllamacpp wheel's version, the instruction sets its CPU backend was built
    for (``get_system_info``: what it *can* use, whatever the CPU has), and the GGUF's quantization."""
    import xllamacpp

    info = xllamacpp.get_system_info()
    built = []
    for part in info.split("|"):
        name, _, value = part.rpartition(":")[2].partition("=")
        if value.strip() == "1" and name.strip().startswith(("AVX", "FMA", "F16C", "AMX")):
            built.append(name.strip())
    out = {"engine": "llama.cpp", "version": f"xllamacpp {xllamacpp.__version__}", "system_info": info.strip(),
           "isa": " ".join(built)}
    if gguf_path is not None:
        out.update(gguf_quantization(gguf_path))
    return out


def label(engine: dict) -> str:
    """"torch AVX512-BF16, bfloat16" / "llama.cpp AVX AVX2 FMA, Q4_1": instruction set and precision."""
    precision = engine.get("dtype") or engine.get("file_type") or "?"
    return f"{engine['engine']} {engine.get('isa') or '?'}, {precision}"


# ---------------------------------------------------------------------------------------- load and timing

def _busy_ticks(cpus: list[int]) -> int | None:
    """Busy clock ticks (user, nice, system, irq, softirq, steal) summed over ``cpus``; None without /proc/stat."""
    try:
        lines = Path("/proc/stat").read_text().splitlines()
    except OSError:
        return None
    want = {f"cpu{c}" for c in cpus}
    total = 0
    for line in lines:
        parts = line.split()
        if parts and parts[0] in want:
            user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in parts[1:9])
            total += user + nice + system + irq + softirq + steal
    return total


class ForeignLoad:
    """``with ForeignLoad() as load: ...``; then ``load.cores``: the CPU time that other processes took on this
    process's CPUs during the block, per second of wall time (0.0 = nobody else ran; 1.0 = a whole core's worth),
    and ``load.own``: this process's CPU seconds during the block. Without /proc/stat (not Linux): the 1-minute
    load average after the block minus this process's own cores, a coarser stand-in."""

    def __init__(self):
        self.cpus = _cpus()
        self.cores = math.nan
        self.own = math.nan

    def __enter__(self):
        self._ticks = _busy_ticks(self.cpus)
        self._own = time.process_time()
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc):
        wall = max(time.perf_counter() - self._wall, 1e-9)
        own = self.own = time.process_time() - self._own
        ticks = _busy_ticks(self.cpus)
        if ticks is not None and self._ticks is not None:
            busy = (ticks - self._ticks) / os.sysconf("SC_CLK_TCK")
            self.cores = max(0.0, busy - own) / wall
        else:
            avg = _loadavg()
            self.cores = max(0.0, avg[0] - own / wall) if avg else math.nan
        return False


class Timing:
    """The timed runs of one engine on one workload: ``measure`` each run, then ``row`` / ``ratio`` / ``rate``."""

    def __init__(self, max_foreign_load: float = DEFAULT_MAX_FOREIGN_LOAD):
        self.max_foreign_load = max_foreign_load
        self.runs: list[float] = []
        self.foreign: list[float] = []
        self.cpu: list[float] = []

    def measure(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` once, timed, with the foreign load and this process's CPU time during it; returns what
        ``fn`` returns."""
        with ForeignLoad() as load:
            t0 = time.perf_counter()
            out = fn()
            dt = time.perf_counter() - t0
        self.runs.append(dt)
        self.foreign.append(load.cores)
        self.cpu.append(load.own)
        return out

    @property
    def loaded(self) -> bool:
        return any(not (f <= self.max_foreign_load) for f in self.foreign if not math.isnan(f))

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def cpu_median(self) -> float:
        """The median of this process's CPU seconds per run."""
        return statistics.median(self.cpu)

    def row(self, key: str = "s") -> dict:
        """``{key: median, key_min, key_max, key_runs, foreign_load_max}``; the numbers are ``LOADED`` when a run
        had more foreign load than allowed (the runs and loads stay, so a reader sees why)."""
        foreign = max((f for f in self.foreign if not math.isnan(f)), default=None)
        out = {"repeats": len(self.runs), f"{key}_runs": [round(x, 3) for x in self.runs],
               "foreign_load_max_cores": None if foreign is None else round(foreign, 3)}
        if self.loaded:
            return {key: LOADED, f"{key}_min": LOADED, f"{key}_max": LOADED, **out}
        return {key: round(self.median, 3), f"{key}_min": round(min(self.runs), 3),
                f"{key}_max": round(max(self.runs), 3), **out}

    def cpu_row(self, key: str = "cpu_s") -> dict:
        """``{key: median, key_runs}`` of this process's CPU seconds per run (every thread's). Reported under
        foreign load too: with one torch thread it is about the thread-seconds the work takes on an idle core."""
        return {key: round(self.cpu_median, 2), f"{key}_runs": [round(x, 2) for x in self.cpu]}

    def minus(self, base: "Timing", key: str = "s_minus_first") -> dict:
        """This median minus ``base``'s, in seconds; ``LOADED`` when either side is."""
        return {key: LOADED if self.loaded or base.loaded else round(self.median - base.median, 2)}

    def rate(self, n: float, digits: int = 2) -> float | str:
        """``n`` per second at the median time, or ``LOADED``."""
        return LOADED if self.loaded else round(n / self.median, digits)

    def ratio(self, base: "Timing", key: str = "speedup") -> dict:
        """``base``'s median over this one's (how many times faster this is), with the range the runs allow;
        ``LOADED`` when either side is."""
        if self.loaded or base.loaded:
            return {key: LOADED, f"{key}_range": LOADED}
        return {key: round(base.median / self.median, 2),
                f"{key}_range": [round(min(base.runs) / max(self.runs), 2), round(max(base.runs) / min(self.runs), 2)]}


def interleave(engines: Sequence[tuple[str, Callable[[Timing], T]]], repeats: int, max_foreign_load: float,
               same: Callable[[T, T], bool] = operator.eq, alternate: bool = False
               ) -> tuple[dict[str, Timing], dict[str, T], dict[str, str]]:
    """Each engine's ``run(timing)`` ``repeats`` times, round by round (A1, B1, A2, B2, ...; with ``alternate``
    every other round in the opposite order), so that a drift of the machine touches every engine alike. ``run``
    times its own work with ``timing.measure`` (setting up, e.g. a fresh cache, stays outside the timer) and
    returns its outputs. Returns each engine's ``Timing``, its first run's outputs, and ``repeats_identical``:
    "k/n", how many of its n runs gave outputs ``same`` as the first's."""
    timings = {name: Timing(max_foreign_load) for name, _ in engines}
    first: dict[str, T] = {}
    same_count = dict.fromkeys(timings, 0)
    for i in range(repeats):
        for name, run in (engines[::-1] if alternate and i % 2 else engines):
            out = run(timings[name])
            first.setdefault(name, out)
            same_count[name] += bool(same(first[name], out))
    return timings, first, {name: f"{k}/{repeats}" for name, k in same_count.items()}


def run_facts(repeats: int, max_foreign_load: float, timings: list[Timing]) -> dict:
    """The meta fields every script using this module writes: repeats, the load limit, the load average at the
    end, and whether any timing was refused."""
    return {"repeats": repeats, "max_foreign_load_cores": None if math.isinf(max_foreign_load) else max_foreign_load,
            "loadavg_at_end": _loadavg(), "machine_loaded": any(t.loaded for t in timings)}
