#!/usr/bin/env bash
# The offline study on the real ARLBench tables (docs/results/arlbench_study): the paper's four
# methods (ERAHBO at erahbo's defaults) and the paper's own ERAHBO (`erahbo-paper`), 20
# repetitions x 1000 runs, the paper's protocol (a shared initial design), three ways: the paper's Vizier processing at alpha = 1,
# linear minmax processing at alpha = 1, and Vizier at alpha = 20 (above every table's alpha*,
# where the mean-variance trade-off exists: `erahbo dataset inspect data/arlbench`). The
# reports (and per_task.md: summary, per-task tables, Wilcoxon over tasks) are copied into
# docs/results/arlbench_study{,/minmax,/alpha20}. Resumable (finished
# traces are kept): after new data, remove results/arlbench_study* first.
#
#   scripts/arlbench_study.sh [DATA...]     # default: data/arlbench (every merged table)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DATA=("${@:-data/arlbench}")
DOCS=docs/results/arlbench_study
METHODS=${METHODS:-erahbo,erahbo-paper,rahbo-k2,rahbo-k20,gpucb-k20}
run() {  # run NAME PROCESSING ALPHA
  local out=results/arlbench_study$1 dest=$DOCS${1/_//}
  "$PY" -m erahbo benchmark "${DATA[@]}" --repetitions 20 --budget 1000 --methods "$METHODS" \
      --outcome-processing "$2" --alpha "$3" --out "$out" --workers "${WORKERS:-1}"
  mkdir -p "$dest"
  rm -rf "$dest/figures"
  cp -r "$out/report/report.md" "$out/report/ranks.csv" "$out/report/figures" "$dest/"
  {  # the summary, per-task tables and Wilcoxon lines the README quotes
    echo "# Per task: the paper's protocol, --outcome-processing $2 --alpha $3"
    echo
    echo "\`python benchmarks/defaults_study.py --summarize --out $out --budget 1000 --per-task --wilcoxon erahbo\`"
    echo
    "$PY" benchmarks/defaults_study.py --summarize --out "$out" --budget 1000 --per-task \
        --wilcoxon erahbo
  } >"$dest/per_task.md"
  echo "report: $dest/report.md"
}
run "" vizier 1
run _minmax minmax 1
run _alpha20 vizier 20
