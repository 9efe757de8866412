# wobble — how language-model answers wobble when the instructions around them change.
#
#   snakemake --cores 2                                    # default run (config.yaml, demo scale)
#   snakemake --cores 2 --configfile configs/smoke.yaml    # tiny models, used by the tests
#   snakemake --cores 2 instructions                       # one study's tables and figures
#   snakemake --cores 2 --configfile configs/reference.yaml   # the reference run, under results/reference/
#   snakemake --profile profiles/slurm --configfile configs/paper.yaml   # paper scale on SLURM
#
# The studies come from the registry (src/wobble/studies/__init__.py): each one's rules file is
# included, target `all` = every enabled study's tables and figures plus the data/model layers, and
# each study gets a target rule named after it. Adding a study changes nothing in this file.
import os
import sys

from snakemake.utils import min_version

min_version("8.0")

# envs/wobble.yaml (--software-deployment-method conda) installs this checkout and its constraints.txt through
# ${WOBBLE_ROOT}: Snakemake creates the env from a copy of that file in .snakemake/conda/.
os.environ.update(WOBBLE_ROOT=os.path.abspath(workflow.basedir))


# A --configfile replaces config.yaml: no silent merge of two configs. The profiles' replace-workflow-config does
# that for the main Snakemake process only; the jobs it spawns (SLURM job steps, job groups) are not passed the
# flag and would merge config.yaml back in, so the workflow decides itself.
if workflow.overwrite_configfiles:
    print(f"config.yaml is replaced by the --configfile(s) {', '.join(os.path.relpath(f) for f in workflow.overwrite_configfiles)}",
          file=sys.stderr)
else:

    configfile: "config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/models.smk"
include: "rules/probe.smk"
include: "rules/report.smk"


for _study in STUDIES:

    include: study_spec(_study).rules


rule all:
    input:
        workflow_targets(),
    default_target: True


# One study at a time: `snakemake --cores 2 <study>` (nothing to do when the study is off; the log says why).
for _study in STUDIES:

    rule:
        name:
            _study
        input:
            study_targets(_study),


# A mistyped study, rule or table name on the command line: one line naming what exists (rules/common.smk).
check_targets()


# Steps that need no compute node: on a cluster (profiles/slurm) they run in the main Snakemake process instead of
# as jobs. None loads a model (every rule that does stays a cluster job with its GPU and memory request); each
# takes seconds of light CPU or I/O, less than a queue wait; `acquire` downloads, which compute nodes often
# cannot. The SuperNI scoring and the bootstrap summaries (minutes each at paper scale) and every rule that loads
# a model (materialize_model, probe, finetune, the *_infer rules, classifiers, judges, instructions_split's word
# proposer) are cluster jobs.
localrules:
    acquire,
    prepare,
    first_token_prompts,
    first_token_classifier_data,
    first_token_classifier_scores,
    followup_items,
    followup_extremes,
    icl_bias_split,
    icl_bias_requests,
    icl_bias_score,
    instructions_selection,
    instructions_train_pairs,
    render_table,
    render_figure,
    study_findings,
    findings,
    scorecard,
    provenance_bundle,
    run_page,


# A run (not a dry run) of a paper-scale config refuses unpinned hub models before its first job.
onstart:
    refuse_unpinned_revisions()


# Snakemake waits for its scheduler's re-run timers before it exits (100 s with profiles/default): cancel them.
onsuccess:
    cancel_scheduler_timers()


onerror:
    cancel_scheduler_timers()
