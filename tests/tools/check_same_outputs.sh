#!/usr/bin/env bash
# A refactor changes no result: one run's tables, figures, claims ledgers and scorecards, rendered by this checkout's
# code, are byte-identical to what an older checkout renders from the same run.
#
#   tests/tools/check_same_outputs.sh OLD_CHECKOUT RUN_DIR OLD_CONFIG NEW_CONFIG
#
# RUN_DIR holds a finished run (its results folder with the scored outputs); OLD_CONFIG and NEW_CONFIG are that run's
# config in each checkout's vocabulary (a renamed key is the only difference a refactor may make). Tables and figures:
# tests/tools/compare_render.py, per study, with this checkout's code against the files in RUN_DIR (which the run's
# own code rendered: make RUN_DIR with OLD_CHECKOUT's code). Ledgers and scorecards: tests/tools/render_ledgers.py
# in each checkout, then diff -r. Exit status 1 when anything differs; run from this checkout's root with its .venv.
set -euo pipefail
old=$(cd "$1" && pwd) run=$(cd "$2" && pwd) old_cfg=$(realpath "$3") new_cfg=$(realpath "$4")
new=$(pwd) py="$new/.venv/bin/python" out=$(mktemp -d) status=0
for study in instructions followup icl_bias first_token; do
    PYTHONPATH="$new/src" "$py" tests/tools/compare_render.py run --study "$study" --root "$run" --config "$new_cfg" \
        --out "$out/render-$study" > "$out/render-$study.log" || status=1
    tail -1 "$out/render-$study.log" | sed "s/^/$study tables and figures: /"
done
(cd "$old" && PYTHONPATH="$old/src" "$py" tests/tools/render_ledgers.py "$old_cfg" "$run" "$out/ledgers-old" 2>/dev/null)
PYTHONPATH="$new/src" "$py" tests/tools/render_ledgers.py "$new_cfg" "$run" "$out/ledgers-new" 2>/dev/null
if diff -r "$out/ledgers-old" "$out/ledgers-new" > "$out/ledgers.diff"; then
    echo "ledgers and scorecards: $(find "$out/ledgers-new" -type f | wc -l) files byte-identical"
else
    echo "ledgers and scorecards DIFFER: $out/ledgers.diff"; status=1
fi
echo "details: $out"
exit $status
