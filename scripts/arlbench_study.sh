#!/usr/bin/env bash
# The offline study on the real ARLBench tables (docs/results/arlbench_study): the paper's four
# methods, 20 repetitions x 1000 runs, under Vizier processing (the paper's) and minmax; then
# the reports are copied into docs/results/arlbench_study{,/minmax}. Resumable (finished traces
# are kept): after new data, remove results/arlbench_study* first.
#
#   scripts/arlbench_study.sh [DATA...]     # default: data/arlbench (every merged table)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DATA=("${@:-data/arlbench}")
DOCS=docs/results/arlbench_study
for proc in vizier minmax; do
  out=results/arlbench_study$([[ $proc == minmax ]] && echo _minmax || true)
  dest=$DOCS$([[ $proc == minmax ]] && echo /minmax || true)
  "$PY" -m erahbo benchmark "${DATA[@]}" --repetitions 20 --budget 1000 \
      --outcome-processing "$proc" --out "$out" --workers "${WORKERS:-1}"
  mkdir -p "$dest"
  rm -rf "$dest/figures"
  cp -r "$out/report/report.md" "$out/report/ranks.csv" "$out/report/figures" "$dest/"
  echo "report: $dest/report.md"
done
