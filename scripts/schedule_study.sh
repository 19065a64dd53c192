#!/usr/bin/env bash
# The paper's beta_stop schedule ablation (appendix "Schedule beta_stop", eqs. exp_schedule and
# sig_schedule): ERAHBO with a constant beta_stop = 1 against exponential (gamma = 5, 20, 50)
# and sigmoid (s = 10, 20) schedules rising from 0 to 1, with RAHBO (k=2) as the reference
# the schedules were designed to catch early. Three studies, reports copied into
# docs/results/schedule_study/{real_alpha1,real_alpha20,synthetic}:
#   - the real ARLBench tables (data/arlbench), alpha = 1 and alpha = 20 (above every table's
#     alpha*), 20 repetitions x 1000 runs;
#   - the 19 synthetic paper-shaped tasks of `erahbo dataset synth --tasks 19 --seed 0`,
#     alpha = 1, 10 repetitions x 1000 runs.
# Resumable (finished traces are kept): after new data, remove results/schedule_study* first.
#
#   WORKERS=2 scripts/schedule_study.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
METHODS=erahbo,erahbo-exp5,erahbo-exp20,erahbo-exp50,erahbo-sig10,erahbo-sig20,rahbo-k2
DOCS=docs/results/schedule_study
run() {  # run NAME REPETITIONS ALPHA DATA...
  local name=$1 reps=$2 alpha=$3 out=results/schedule_study/$1
  shift 3
  "$PY" -m erahbo benchmark "$@" --methods "$METHODS" --repetitions "$reps" --budget 1000 \
      --alpha "$alpha" --out "$out" --workers "${WORKERS:-1}"
  mkdir -p "$DOCS/$name"
  rm -rf "$DOCS/$name/figures"
  cp -r "$out/report/report.md" "$out/report/ranks.csv" "$out/report/figures" "$DOCS/$name/"
  echo "report: $DOCS/$name/report.md"
}
run real_alpha1 20 1 data/arlbench
run real_alpha20 20 20 data/arlbench
SYN=results/schedule_study/synthetic-tasks
[ -d "$SYN" ] || "$PY" -m erahbo dataset synth --out "$SYN" --tasks 19 --seed 0
run synthetic 10 1 "$SYN"
