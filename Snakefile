# wobble — how language-model answers wobble when the instructions around them change.
#
#   snakemake --cores 2                                    # default run (config.yaml, demo scale)
#   snakemake --cores 2 --configfile configs/smoke.yaml    # tiny models, used by the tests
#   snakemake --profile profiles/slurm --configfile configs/paper.yaml   # paper scale on SLURM
#
# Target `all` = every table and figure of the enabled studies (plus the data/model layers they need);
# targets `instructions` / `first_token` = one study's tables and figures.
from snakemake.utils import min_version

min_version("8.0")


configfile: "config.yaml"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/models.smk"
include: "rules/probe.smk"
include: "rules/instructions.smk"
include: "rules/first_token.smk"


rule all:
    input:
        all_targets(),
    default_target: True


# One study at a time: `snakemake --cores 2 instructions` / `snakemake --cores 2 first_token`.
rule instructions:
    input:
        instructions_targets(),


rule first_token:
    input:
        first_token_targets(),
