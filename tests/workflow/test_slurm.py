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
CPU_MODEL_RULES = {"probe"}


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
    threads: int = 1
    inputs: tuple[str, ...] = ()
    resources: Resources = field(default_factory=Resources)

    @property
    def name(self) -> str:
        return self.rule

    @property
    def runs_model(self) -> bool:
        return any(path.startswith("resources/models/") for path in self.inputs)


def _value(text: str):
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def parse_plan(text: str) -> list[PlannedJob]:
    """The jobs of ``snakemake -n`` output: rule, local or not, threads, inputs, resources (ints where whole)."""
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


def rule_groups(rulegraph_dot: str) -> dict[str, str]:
    """Snakemake ``--groups`` from ``--rulegraph`` (DOT): one group per strongly connected set of rules, named
    after its first rule in sorted order, so no path of jobs leaves a group and enters it again. The `all`
    target stays ungrouped (it runs locally)."""
    labels = dict(re.findall(r"^\s*(\d+)\[label = \"(\w+)\"", rulegraph_dot, flags=re.M))
    edges: dict[str, set[str]] = {rule: set() for rule in labels.values()}
    for src, dst in re.findall(r"^\s*(\d+) -> (\d+)", rulegraph_dot, flags=re.M):
        edges[labels[src]].add(labels[dst])

    def reach(start: str) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for nxt in edges[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    reachable = {rule: reach(rule) for rule in edges}
    rules = sorted(set(edges) - {"all"})
    return {rule: min(r for r in rules if r in reachable[rule] and rule in reachable[r]) for rule in rules}


# ----------------------------------------------------------------------------------- parser (hand-written)

PLAN_SAMPLE = """\
[Mon Nov 23 22:35:21 2026]
rule finetune:
    input: resources/models/t5-3b, results/instructions/splits/train_pairs.jsonl
    output: resources/models/finetuned/tk-3b
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
    assert (finetune.rule, finetune.local, finetune.threads) == ("finetune", False, 4)
    assert finetune.inputs == ("resources/models/t5-3b", "results/instructions/splits/train_pairs.jsonl")
    assert finetune.resources == {"tmpdir": "/tmp", "mem_mb": 16000, "mem": "16 GB", "slurm_account": "",
                                  "runtime": 720, "gpu": 1}
    assert finetune.resources.gpu == 1 and finetune.runs_model
    assert (all_.rule, all_.local, all_.threads, all_.runs_model) == ("all", True, 1, False)


RULEGRAPH_SAMPLE = """\
digraph snakemake_dag {
    graph[bgcolor=white, margin=0];
	0[label = "all", color = "0.02 0.6 0.85", style="rounded"];
	1[label = "prepare", color = "0.58 0.6 0.85", style="rounded"];
	2[label = "infer", color = "0.00 0.6 0.85", style="rounded"];
	3[label = "extremes", color = "0.60 0.6 0.85", style="rounded"];
	4[label = "score", color = "0.57 0.6 0.85", style="rounded"];
	1 -> 2
	2 -> 3
	3 -> 2
	2 -> 4
	4 -> 0
}
"""


def test_rule_groups_merge_rules_on_a_cycle():
    # infer -> extremes -> infer (a second turn) must share a group; the others stay alone; `all` is left out
    assert rule_groups(RULEGRAPH_SAMPLE) == {"prepare": "prepare", "infer": "extremes", "extremes": "extremes",
                                             "score": "score"}


def test_node_capacity_and_grouping_args():
    line = ("NodeName=vm Arch=x86_64 CoresPerSocket=2 CPUAlloc=0 CPUTot=2 Gres=gpu:2 NodeAddr=127.0.0.1 "
            "RealMemory=21112 AllocMem=0 State=IDLE Partitions=cpu,gpu")
    node = node_capacity(line)
    assert node == {"cpus": 2, "mem_mb": 21112, "gpu": 2}
    assert node_capacity(line.replace("Gres=gpu:2", "Gres=gpu:a100:4"))["gpu"] == 4
    assert node_capacity(line.replace("Gres=gpu:2", "Gres=(null)"))["gpu"] == 0
    assert grouping_args({"b": "b", "a": "x", "x": "x"}, node) == [
        "--groups", "a=x", "b=b", "x=x", "--group-components", "b=1000", "x=1000",
        "--resources", "mem_mb=21112", "gpu=2", "--cores", "2"]


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


def grouping_args(groups: dict[str, str], node: dict[str, int]) -> list[str]:
    """Snakemake options that submit each group's jobs as one SLURM job sized to fit ``node``."""
    names = sorted(set(groups.values()))
    return ["--groups", *(f"{rule}={group}" for rule, group in sorted(groups.items())),
            "--group-components", *(f"{group}=1000" for group in names),
            "--resources", f"mem_mb={node['mem_mb']}", f"gpu={node['gpu']}", "--cores", str(node["cpus"])]


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
    fields = ["JobID", "State", "Partition", "AllocTRES", "Comment"]
    out = subprocess.run(["sacct", "-X", "-n", "-P", "-j", ",".join(job_ids), "-o", ",".join(fields)],
                         capture_output=True, text=True, check=True).stdout
    return [dict(zip(fields, line.split("|"))) for line in out.splitlines()]


def _tables(workdir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(workdir)): p.read_bytes() for p in sorted(workdir.glob("results/*/tables/*"))
            if not p.name.endswith(".prov.json")}


@pytest.mark.slurm
@pytest.mark.e2e
@pytest.mark.skipif(os.environ.get("WOBBLE_TEST_SLURM") == "0",
                    reason="WOBBLE_TEST_SLURM=0: the real-SLURM run (it installs and starts SLURM here) is switched off")
def test_smoke_through_slurm_completes_and_matches_a_local_run(slurm_node, smoke_run, tmp_path_factory, mirror):
    """configs/smoke.yaml through profiles/slurm on a real cluster: every SLURM job COMPLETED in sacct (GPU
    rules in partition gpu holding gres/gpu), tables byte-identical to a local run of the same files (the
    session's smoke run).

    On a 2-core machine ~200 one-second jobs would each pay two Snakemake start-ups; the jobs of each rule
    (of each cycle of rules) go as one SLURM job instead (Snakemake job groups)."""
    via_slurm, local = tmp_path_factory.mktemp("slurm"), smoke_run
    copy_workflow(via_slurm)
    env = {k: v for k, v in os.environ.items() if k not in DIST_VARS} | {"WOBBLE_SLURM_ACCOUNT": SLURM_ACCOUNT}
    graph = subprocess.run([str(SNAKEMAKE), "--rulegraph", "--configfile", "run.yaml", "--cores", "1"],
                           cwd=via_slurm, capture_output=True, text=True, env=env)
    assert graph.returncode == 0, graph.stderr[-3000:]
    groups = rule_groups(graph.stdout)
    plan = subprocess.run([str(SNAKEMAKE), "-n", "--configfile", "run.yaml", "--cores", "1"],
                          cwd=via_slurm, capture_output=True, text=True, env=env)
    gpu_groups = {groups[job.rule] for job in parse_plan(plan.stdout) if job.resources.get("gpu")}
    assert gpu_groups, "the smoke plan has no GPU rule"

    cmd = [str(SNAKEMAKE), "--profile", "profiles/slurm", "--configfile", "run.yaml",
           "--slurm-init-seconds-before-status-checks", "2", *grouping_args(groups, slurm_node)]
    log_path = via_slurm / "slurm-run.log"
    with log_path.open("w") as log_file:
        slurm_run = subprocess.run(cmd, cwd=via_slurm, stdout=log_file, stderr=subprocess.STDOUT, env=env,
                                   timeout=3600)
    log = log_path.read_text()
    assert slurm_run.returncode == 0, log[-5000:]

    job_ids = re.findall(r"has been submitted with SLURM jobid (\d+)", log)
    rows = _sacct(job_ids)
    assert sorted(r["JobID"] for r in rows) == sorted(job_ids)
    assert [r for r in rows if r["State"] != "COMPLETED"] == []
    # a group's SLURM job is commented rule_<group>_<its rules>; every rule that ran did so inside one
    ran = {max((g for g in set(groups.values()) if row["Comment"].startswith(f"rule_{g}_")), key=len,
               default=row["Comment"]): row
           for row in rows}
    finished = set(re.findall(r"Finished jobid: \d+ \(Rule: (\w+)\)", log)) - {"all"}
    assert finished and {groups[rule] for rule in finished} == set(ran)
    for group, row in ran.items():
        wants_gpu = group in gpu_groups
        assert (row["Partition"] == "gpu") == wants_gpu and ("gres/gpu=" in row["AllocTRES"]) == wants_gpu, row

    ours, theirs = _tables(via_slurm), _tables(local)
    assert ours and sorted(ours) == sorted(theirs)
    assert [name for name in ours if ours[name] != theirs[name]] == []
    OTHER_CLEAN_SMOKE_RUNS.append(via_slurm)  # a second clean run for test_two_clean_runs_give_the_same_bytes

