"""SLURM: what profiles/slurm makes each job request, and the smoke workflow through a real single-node SLURM.

The plan tests need no cluster: they read `snakemake -n --profile profiles/slurm` on configs/paper.yaml and
feed each planned job to the executor plugin's own sbatch/srun builders. The `slurm` test starts a cluster
(tests/slurm/start-cluster.sh) and checks every job in `sacct` and the tables against a local run.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from conftest import DIST_VARS, OTHER_CLEAN_SMOKE_RUNS, REPO, SNAKEMAKE, copy_workflow

PROFILE = REPO / "profiles" / "slurm"
START_CLUSTER = REPO / "tests" / "slurm" / "start-cluster.sh"
STOP_CLUSTER = REPO / "tests" / "slurm" / "stop-cluster.sh"
SLURM_ACCOUNT = "wobble"  # the account start-cluster.sh creates
# Jobs that run a model on data must get a GPU on a cluster; `probe` (a few records through each backend
# method, a plumbing check) is the one model job that runs fine on CPU.
# rules that load a model on the CPU: the probe, and the instructions splits' masked-LM word proposer (BERT, 0.18 B)
CPU_MODEL_RULES = {"probe", "instructions_split", "instructions_perturbation_examples"}


class Resources(dict):
    """A job's resources as the SLURM plugin reads them: ``.get(name)`` and ``.name``."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass
class PlannedJob:
    """One job of a dry-run plan, with the attributes the plugin's sbatch/srun builders use."""

    rule: str
    local: bool
    jobid: int | None = None
    threads: int = 1
    inputs: tuple[str, ...] = ()
    resources: Resources = field(default_factory=Resources)

    @property
    def name(self) -> str:
        return self.rule

    @property
    def runs_model(self) -> bool:
        return any(path.startswith("resources/models/") for path in self.inputs)


def declared_localrules() -> set[str]:
    """The rule names of the Snakefile's ``localrules:`` block (a dry run does not say which jobs are local)."""
    lines = (REPO / "Snakefile").read_text().splitlines()
    start = lines.index("localrules:") + 1
    names = []
    for line in lines[start:]:
        if not line.startswith("    "):
            break
        names += [n.strip() for n in line.split(",") if n.strip()]
    return set(names)


def _value(text: str):
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def parse_plan(text: str) -> list[PlannedJob]:
    """The jobs of ``snakemake -n`` output (or of a run's log): rule, local or not, jobid, threads, inputs,
    resources (ints where whole)."""
    jobs, job = [], None
    for line in text.splitlines():
        head = re.fullmatch(r"(local)?rule (\w+):", line)
        if head:
            job = PlannedJob(rule=head.group(2), local=bool(head.group(1)))
            jobs.append(job)
            continue
        item = re.fullmatch(r"    (\w+): (.*)", line)
        if job is None or not item:
            job = None if not line.startswith("    ") else job
            continue
        key, value = item.groups()
        if key == "threads":
            job.threads = int(value)
        elif key == "jobid":
            job.jobid = int(value)
        elif key == "input":
            job.inputs = tuple(value.split(", "))
        elif key == "resources":
            pairs = (part.split("=", 1) for part in value.split(", "))
            job.resources = Resources({k: _value(v) for k, v in pairs})
    return jobs


def submit_command(job: PlannedJob, partitions) -> str:
    """The sbatch command the plugin would run for ``job`` (partition chosen from ``partitions``; the plugin's
    run_job: get_submit_command + set_gres_string)."""
    from snakemake_executor_plugin_slurm.partitions import get_best_partition
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    partition = get_best_partition(partitions, job, logging.getLogger("slurm-plan"))
    params = {"run_uuid": "plan", "slurm_logfile": "plan.log", "comment_str": f"rule_{job.rule}",
              "account": f" -A {SLURM_ACCOUNT}", "partition": f" -p {partition}", "workdir": "/work"}
    settings = SimpleNamespace(requeue=False, no_requeue=False, qos=None, reservation=None)
    return get_submit_command(job, params, settings) + set_gres_string(job)


def step_command(job: PlannedJob) -> str:
    """The srun line the plugin's jobstep runs inside the allocation (before the snakemake call)."""
    from snakemake_executor_plugin_slurm_jobstep import get_cpu_setting, get_gpu_setting, get_node_setting

    gpu = bool(job.resources.get("gpu"))
    return f"srun -n1 {get_cpu_setting(job, gpu)} {get_gpu_setting(job)} {get_node_setting(job)}"


# ----------------------------------------------------------------------------------- parser (hand-written)

PLAN_SAMPLE = """\
[Mon Nov 23 22:35:21 2026]
rule finetune:
    input: resources/models/t5-3b, results/instructions/splits/train_pairs.jsonl
    output: resources/models/finetuned/tk-3b
    jobid: 7
    wildcards: model=tk-3b
    threads: 4
    resources: tmpdir=/tmp, mem_mb=16000, mem=16 GB, slurm_account=, runtime=720, gpu=1
Shell command: None

[Mon Nov 23 22:35:21 2026]
localrule all:
    input: results/instructions/tables/table1.md
    jobid: 0
    resources: tmpdir=/tmp
"""


def test_parse_plan_reads_each_job():
    finetune, all_ = parse_plan(PLAN_SAMPLE)
    assert (finetune.rule, finetune.local, finetune.threads, finetune.jobid) == ("finetune", False, 4, 7)
    assert finetune.inputs == ("resources/models/t5-3b", "results/instructions/splits/train_pairs.jsonl")
    assert finetune.resources == {"tmpdir": "/tmp", "mem_mb": 16000, "mem": "16 GB", "slurm_account": "",
                                  "runtime": 720, "gpu": 1}
    assert finetune.resources.gpu == 1 and finetune.runs_model
    assert (all_.rule, all_.local, all_.threads, all_.runs_model) == ("all", True, 1, False)


def test_node_capacity():
    line = ("NodeName=vm Arch=x86_64 CoresPerSocket=2 CPUAlloc=0 CPUTot=2 Gres=gpu:2 NodeAddr=127.0.0.1 "
            "RealMemory=21112 AllocMem=0 State=IDLE Partitions=cpu,gpu")
    node = node_capacity(line)
    assert node == {"cpus": 2, "mem_mb": 21112, "gpu": 2}
    assert node_capacity(line.replace("Gres=gpu:2", "Gres=gpu:a100:4"))["gpu"] == 4
    assert node_capacity(line.replace("Gres=gpu:2", "Gres=(null)"))["gpu"] == 0


# ------------------------------------------------------------------------------------ the paper-scale plan

def _paper_plan(tmp_path: Path, *extra: str) -> list[PlannedJob]:
    copy_workflow(tmp_path, "configs/paper.yaml")
    env_path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if "conda" not in p)
    # A dry run caps every job's threads at --cores (1 when unset); a real SLURM run leaves cores unset and
    # submits the rule's threads, so the plan lifts the cap to show what sbatch would get.
    cmd = [str(SNAKEMAKE), "-n", "--profile", "profiles/slurm", "--configfile", "run.yaml", "--cores", "1024", *extra]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PATH": env_path})  # no conda: the profile must not need it
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return [job for job in parse_plan(proc.stdout) if not job.local]


def test_profile_takes_resources_from_the_rules():
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    assert profile["executor"] == "slurm" and "software-deployment-method" not in profile
    # what the rules declare must reach sbatch: no profile-wide CPUs, GPUs, tasks or per-rule overrides
    assert not {"cpus_per_task", "gpu", "gres", "tasks", "slurm_partition"} & set(profile["default-resources"])
    assert "set-resources" not in profile and "set-threads" not in profile
    # a timeout or preemption is retried with more time (the rules' runtime functions take the attempt too)
    assert profile["retries"] >= 2 and "attempt" in str(profile["default-resources"]["runtime"])
    # no groups: a group of N jobs asks for the sum of their CPUs and memory, which a small node never grants
    assert "groups" not in profile and "group-components" not in profile


def test_paper_plan_gpu_rules_request_a_gpu(tmp_path, mirror):
    from snakemake_executor_plugin_slurm.partitions import read_partition_file

    jobs = _paper_plan(tmp_path)
    partitions = read_partition_file(PROFILE / "partitions.yaml")
    model_rules = {job.rule for job in jobs if job.runs_model} - CPU_MODEL_RULES
    assert "finetune" in model_rules and any(rule.endswith("_infer") for rule in model_rules), model_rules
    for job in jobs:
        sbatch = submit_command(job, partitions)
        assert f"--mem {job.resources['mem_mb']}" in sbatch and f"-t {job.resources['runtime']}" in sbatch
        if job.rule in model_rules and job.runs_model:  # a job that calls a model server runs no model here
            assert job.resources.get("gpu", 0) >= 1, f"{job.rule} runs a model but requests no GPU"
            assert f"--gpus={job.resources['gpu']}" in sbatch and " -p gpu" in sbatch, sbatch
        else:
            assert "--gpus" not in sbatch and " -p cpu" in sbatch, sbatch
            assert f"--ntasks=1 --cpus-per-task={job.threads}" in sbatch, sbatch


def test_multi_gpu_finetune_is_one_task_with_all_its_gpus(tmp_path, mirror):
    """A 4-GPU DeepSpeed finetune is one SLURM task that sees 4 GPUs and starts its ranks itself."""
    from snakemake_executor_plugin_slurm.partitions import read_partition_file

    jobs = _paper_plan(tmp_path, "--set-resources", "finetune:gpu=4", "--set-threads", "finetune=16")
    finetunes = [job for job in jobs if job.rule == "finetune"]
    assert finetunes
    partitions = read_partition_file(PROFILE / "partitions.yaml")
    for job in finetunes:
        assert job.threads == 16, "threads capped: a profile's `cores` limits every SLURM job's CPUs"
        sbatch = submit_command(job, partitions)
        assert "--gpus=4" in sbatch and "--cpus-per-task=16" in sbatch and " -p gpu" in sbatch, sbatch
        assert "--ntasks" not in sbatch, sbatch  # not one task per GPU: the script would run 4 times
        assert step_command(job).split() == ["srun", "-n1", "--cpus-per-task=16", "--gpus=4", "--nodes=1"]


# ------------------------------------------------------------------- the smoke workflow through real SLURM

def node_capacity(scontrol_line: str) -> dict[str, int]:
    """CPUs, memory (MB) and GPUs of a node from one line of ``scontrol -o show node``."""
    fields = dict(item.split("=", 1) for item in scontrol_line.split() if "=" in item)
    gpus = re.search(r"gpu:(?:\w+:)?(\d+)", fields.get("Gres", ""))
    return {"cpus": int(fields["CPUTot"]), "mem_mb": int(fields["RealMemory"]), "gpu": int(gpus.group(1)) if gpus else 0}


# The daemons start-cluster.sh starts, as stop-cluster.sh names them, and how to tell each one runs.
DAEMON_PIDFILES = {"slurmd": "/run/slurm/slurmd.pid", "slurmctld": "/run/slurm/slurmctld.pid",
                   "slurmdbd": "/run/slurm/slurmdbd.pid", "munged": "/run/munge/munged.pid"}


def running_daemons() -> set[str]:
    """The cluster's daemons that run now (by their pid files; MariaDB by `mariadb-admin ping`)."""
    up = set()
    for name, pidfile in DAEMON_PIDFILES.items():
        try:
            os.kill(int(Path(pidfile).read_text().strip()), 0)
            up.add(name)
        except (OSError, ValueError):
            pass
    if shutil.which("mariadb-admin") and subprocess.run(["mariadb-admin", "ping"], capture_output=True).returncode == 0:
        up.add("mariadb")
    return up


@pytest.fixture(scope="module")
def slurm_node(request):
    """A running single-node SLURM (tests/slurm/start-cluster.sh; a no-op when it is up): its capacity. The daemons
    this fixture started (not those that ran before) are stopped when the module's tests are done, also when the
    start failed half-way."""
    if os.geteuid() != 0:
        pytest.skip("SLURM test needs root: it installs slurm-wlm and starts its daemons")
    if not shutil.which("sbatch") and not shutil.which("apt-get"):
        pytest.skip("SLURM test: no SLURM on this machine and no apt-get to install it")
    before = running_daemons()

    def stop_what_we_started():
        started = sorted(running_daemons() - before)
        if started:
            stop = subprocess.run(["bash", str(STOP_CLUSTER), *started], capture_output=True, text=True, timeout=300)
            assert stop.returncode == 0, f"stop-cluster.sh {' '.join(started)} failed:\n{stop.stdout}\n{stop.stderr}"
            assert not running_daemons() - before, "a daemon the SLURM test started still runs"

    request.addfinalizer(stop_what_we_started)
    proc = subprocess.run(["bash", str(START_CLUSTER)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"start-cluster.sh failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    line = subprocess.run(["scontrol", "-o", "show", "node"], capture_output=True, text=True, check=True).stdout
    return node_capacity(line.splitlines()[0])


def _sacct(job_ids: list[str]) -> list[dict[str, str]]:
    fields = ["JobID", "State", "Partition", "ReqTRES", "AllocTRES", "Comment"]
    out = subprocess.run(["sacct", "-X", "-n", "-P", "-j", ",".join(job_ids), "-o", ",".join(fields)],
                         capture_output=True, text=True, check=True).stdout
    return [dict(zip(fields, line.split("|"))) for line in out.splitlines()]


def tres_mem_mb(tres: str) -> float:
    """The memory (MB, as SLURM counts: MiB) of a sacct TRES list, e.g. ``billing=1,cpu=1,mem=8000M,node=1``."""
    m = re.search(r"\bmem=([0-9.]+)([KMGT])", tres)
    assert m, tres
    return float(m.group(1)) * {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024**2}[m.group(2)]


def test_tres_mem_mb():
    assert tres_mem_mb("billing=1,cpu=1,mem=8000M,node=1") == 8000
    assert tres_mem_mb("cpu=2,gres/gpu=1,mem=125G,node=1") == 128000


def _tables(workdir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(workdir)): p.read_bytes() for p in sorted(workdir.glob("results/*/tables/*"))
            if not p.name.endswith(".prov.json")}


@pytest.mark.slurm
@pytest.mark.e2e
@pytest.mark.skipif(os.environ.get("WOBBLE_TEST_SLURM") == "0",
                    reason="WOBBLE_TEST_SLURM=0: the real-SLURM run (it installs and starts SLURM here) is switched off")
def test_smoke_through_slurm_completes_and_matches_a_local_run(slurm_node, smoke_run, tmp_path_factory, mirror):
    """configs/smoke.yaml through the shipped profile, run as the profile's header says a user runs it
    (`WOBBLE_SLURM_ACCOUNT=... snakemake --profile profiles/slurm --configfile ...`; only sacct is polled more often): every SLURM job
    COMPLETED in sacct with the memory its rule computed, GPU jobs in partition gpu holding gres/gpu and the others
    in cpu without, and tables byte-identical to a local run of the same files (the session's smoke run)."""
    via_slurm, local = tmp_path_factory.mktemp("slurm"), smoke_run
    copy_workflow(via_slurm)
    env = {k: v for k, v in os.environ.items() if k not in DIST_VARS} | {"WOBBLE_SLURM_ACCOUNT": SLURM_ACCOUNT}
    plan = subprocess.run([str(SNAKEMAKE), "-n", "--profile", "profiles/slurm", "--configfile", "run.yaml"],
                          cwd=via_slurm, capture_output=True, text=True, env=env)
    assert plan.returncode == 0, plan.stderr[-3000:]
    planned = [job for job in parse_plan(plan.stdout) if job.rule not in declared_localrules() | {"all"}]
    assert any(job.resources.get("gpu") for job in planned), "the smoke plan has no GPU job"
    biggest = max(job.resources["mem_mb"] for job in planned)
    assert biggest <= slurm_node["mem_mb"], (f"the test node has {slurm_node['mem_mb']} MB, a smoke job asks for "
                                             f"{biggest} MB: free memory before start-cluster.sh sizes the node")

    # The one setting beside the profile's: sacct polled every 5 s instead of 20 (test time only: a 202-job smoke run
    # waits a status interval at every step of its DAG; what is submitted and requested is the profile's).
    cmd = [str(SNAKEMAKE), "--profile", "profiles/slurm", "--configfile", "run.yaml",
           "--slurm-init-seconds-before-status-checks", "5"]
    log_path = via_slurm / "slurm-run.log"
    with log_path.open("w") as log_file:
        slurm_run = subprocess.run(cmd, cwd=via_slurm, stdout=log_file, stderr=subprocess.STDOUT, env=env,
                                   timeout=3600)
    log = log_path.read_text()
    assert slurm_run.returncode == 0, log[-5000:]

    # snakemake job (or group job, where the profile groups rules) -> SLURM job
    everything = dict(re.findall(r"Job (\S+) has been submitted with SLURM jobid (\d+)", log))
    submitted = {k: v for k, v in everything.items() if k.isdigit()}
    groups = {k: v for k, v in everything.items() if not k.isdigit()}
    grouped = {item.split("=")[0] for item in yaml.safe_load((PROFILE / "config.yaml").read_text()).get("groups", [])}
    jobs = {str(job.jobid): job for job in parse_plan(log) if str(job.jobid) in submitted}
    single = [job for job in planned if job.rule not in grouped]
    assert sorted(jobs) == sorted(submitted) and len(jobs) == len(single), (len(jobs), len(single))
    n_grouped = len(planned) - len(single)
    assert (0 < len(groups) <= n_grouped) if n_grouped else not groups, (len(groups), n_grouped)
    rows = {row["JobID"]: row for row in _sacct(list(everything.values()))}
    assert sorted(rows) == sorted(everything.values())
    assert all(rows[slurm_id]["State"] == "COMPLETED" for slurm_id in groups.values()), rows
    for jobid, job in jobs.items():
        row = rows[submitted[jobid]]
        assert row["State"] == "COMPLETED" and row["Comment"].startswith(f"rule_{job.rule}"), (job.rule, row)
        wants_gpu = bool(job.resources.get("gpu"))
        assert (row["Partition"] == "gpu") == wants_gpu and ("gres/gpu=" in row["AllocTRES"]) == wants_gpu, row
        # the node does not count memory as consumable (CR_CPU): the request is what the plugin sent to sbatch
        assert tres_mem_mb(row["ReqTRES"]) == job.resources["mem_mb"], (job.rule, job.resources, row)

    ours, theirs = _tables(via_slurm), _tables(local)
    assert ours and sorted(ours) == sorted(theirs)
    assert [name for name in ours if ours[name] != theirs[name]] == []
    OTHER_CLEAN_SMOKE_RUNS.append(via_slurm)  # a second clean run for test_two_clean_runs_give_the_same_bytes

