# The one way a table or figure is made, for every study: `render_table` and `render_figure` read the
# study's declaration (src/wobble/studies/<study>/spec.py, an OutputSpec per table/figure) for their
# inputs, and scripts/render.py hands the same declaration to wobble.report.render. A study adds a
# table by declaring it; this file does not change. The wildcards only match declared names, so these
# rules never compete with a study's own rules.
#
# `make report` (wobble report: the views, then snakemake --report): the report() outputs below, grouped by category
# (the merged ledger, one category per study with its tables, figures and claims ledger, the scorecards), behind
# the landing page report/workflow.rst, whose `wobble-landing` directive (wobble.landing, registered here) draws
# the verdicts, a summary of each study with links to its files, and the merged ledger's short table. Each table,
# ledger and scorecard is listed as its view, an .html page written beside its .md/.csv/.tex in the same step
# (wobble.report.views), since the report shows an .html inline and offers a .md only as a download.
from wobble import landing

landing.register()


rule render_table:
    input:
        unpack(render_inputs),
    output:
        md=result_file("{study}/tables/{name}.md"),
        csv=result_file("{study}/tables/{name}.csv"),
        tex=result_file("{study}/tables/{name}.tex"),
        html=report(
            result_file("{study}/tables/{name}.html"),
            caption="../report/output.rst",
            category="{study}",
            subcategory="tables",
        ),
    wildcard_constraints:
        study=STUDIES_WITH["table"],
        name=TABLE_NAMES,
    params:
        context=render_context,
        caption=render_caption,
        code=render_code,
    log:
        log_file("{study}/{name}.log"),
    benchmark:
        benchmark_file("{study}/{name}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/render.py"


# A figure and the table of its numbers (ours beside the paper's) in one step.
rule render_figure:
    input:
        unpack(render_inputs),
    output:
        png=report(
            result_file("{study}/figures/{name}.png"),
            caption="../report/output.rst",
            category="{study}",
            subcategory="figures",
        ),
        pdf=result_file("{study}/figures/{name}.pdf"),
        data=result_file("{study}/figures/{name}.csv"),
        md=result_file("{study}/tables/{name}.md"),
        csv=result_file("{study}/tables/{name}.csv"),
        tex=result_file("{study}/tables/{name}.tex"),
        html=report(
            result_file("{study}/tables/{name}.html"),
            caption="../report/output.rst",
            category="{study}",
            subcategory="figures",
        ),
    wildcard_constraints:
        study=STUDIES_WITH["figure"],
        name=FIGURE_NAMES,
    params:
        context=render_context,
        caption=render_caption,
        code=render_code,
    log:
        log_file("{study}/{name}.log"),
    benchmark:
        benchmark_file("{study}/{name}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/render.py"


# A study's claims ledger: its declared claims measured on its own outputs, the verdicts applied by the
# pre-registered rule in wobble.report.claims (StudySpec.findings declares the inputs and the measure).
rule study_findings:
    input:
        unpack(findings_inputs),
    output:
        md=result_file("{study}/findings.md"),
        csv=result_file("{study}/findings.csv"),
        tex=result_file("{study}/findings.tex"),
        html=report(
            result_file("{study}/findings.html"),
            caption="../report/output.rst",
            category="{study}",
            subcategory="claims ledger",
        ),
    wildcard_constraints:
        study=FINDINGS_STUDIES,
    params:
        caption=lambda wildcards: findings_spec(wildcards).caption,
        code=render_code,
    log:
        log_file("{study}/findings.log"),
    benchmark:
        benchmark_file("{study}/findings.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/findings.py"


# One ledger across the enabled studies, shown first in the report.
rule findings:
    input:
        # the rows from each study's CSV, each study's notes from its findings.md (wobble.report.findings.ledger_notes)
        csv=lambda wildcards: [f"{study_dir(s)}/findings.csv" for s in findings_studies()],
        md=lambda wildcards: [f"{study_dir(s)}/findings.md" for s in findings_studies()],
    output:
        md=result_file("findings.md"),
        csv=result_file("findings.csv"),
        tex=result_file("findings.tex"),
        html=report(
            result_file("findings.html"),
            caption="../report/findings.rst",
            category=landing.LEDGER_CATEGORY,
        ),
    log:
        log_file("findings.log"),
    benchmark:
        benchmark_file("findings.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/findings_merge.py"


# One scorecard per model: its headline robustness numbers from every enabled study that ran it, each with its
# interval and the paper's nearest number (StudySpec.scorecard declares each study's part).
rule scorecard:
    input:
        unpack(scorecard_inputs),
    output:
        md=result_file("scorecard/{model}.md"),
        csv=result_file("scorecard/{model}.csv"),
        tex=result_file("scorecard/{model}.tex"),
        html=report(
            result_file("scorecard/{model}.html"),
            caption="../report/scorecard.rst",
            category="scorecards",
        ),
    params:
        studies=lambda wildcards: [s for s, _ in scorecard_parts(wildcards.model)],
        label=lambda wildcards: model_label(wildcards.model),
    log:
        log_file("scorecard/{model}.log"),
    benchmark:
        benchmark_file("scorecard/{model}.tsv")
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/scorecard.py"


# The provenance a fresh clone can audit: the sidecar records of every uncommitted file (splits, predictions,
# scores, prepared data, acquired files, models) a study's committed results rest on, committed beside them.
rule provenance_bundle:
    input:
        lambda wildcards: study_targets(wildcards.study) or ["<study-off>"],
    output:
        result_file("{study}/provenance.jsonl"),
    wildcard_constraints:
        study=names_pattern(STUDIES),
    log:
        log_file("{study}/provenance_bundle.log"),
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/provenance_bundle.py"


# A named run's own page, the first thing in its folder and in its report: its models, their scorecards, their
# claims-ledger rows and the time the run took (wobble.report.run_page). Only for a config with a `name:`.
rule run_page:
    input:
        unpack(run_page_inputs),
    output:
        md=result_file("README.md"),
        html=report(
            result_file("README.html"),
            caption="../report/run_page.rst",
            category="0. at a glance",
        ),
    params:
        name=config.get("name"),
        studies=findings_studies(),
        models={m: model_label(m) for m in scorecard_models()},
        benchmarks=BENCHMARKS,
    log:
        log_file("run_page.log"),
    conda:
        "../envs/wobble.yaml"
    script:
        "../scripts/run_page.py"
