#!/usr/bin/env bash
# Ablation of ERAHBO's stopping rule: the paper's GP-based confidence rule (erahbo) against a
# racing rule on sample statistics after SMAC's intensifier (erahbo-race: seeds double,
# k_min, 2 k_min, ... <= k_max, while x_t's sample MV keeps up with the best other one),
# with RAHBO k=2 and k=20 as the fixed-k ends. Same models and acquisition for all.
#   - real ARLBench tables (data/arlbench), alpha = 1 and 20, 20 repetitions x 1000 runs;
#   - 19 synthetic paper-shaped tasks (`erahbo dataset synth --tasks 19 --seed 0`), alpha 1,
#     10 repetitions x 1000 runs.
# Reports copied into docs/results/racing_study/{real_alpha1,real_alpha20,synthetic}.
# Resumable (finished traces are kept): after new data, remove results/racing_study first.
#
#   WORKERS=2 scripts/racing_study.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
METHODS=erahbo,erahbo-race,rahbo-k2,rahbo-k20
DOCS=docs/results/racing_study
run() {  # run NAME REPETITIONS ALPHA DATA...
  local name=$1 reps=$2 alpha=$3 out=results/racing_study/$1
  shift 3
  "$PY" -m erahbo benchmark "$@" --methods "$METHODS" --repetitions "$reps" --budget 1000 \
      --alpha "$alpha" --out "$out" --workers "${WORKERS:-1}"
  mkdir -p "$DOCS/$name"
  rm -rf "$DOCS/$name/figures"
  cp -r "$out/report/report.md" "$out/report/ranks.csv" "$out/report/figures" "$DOCS/$name/"
  echo "report: $DOCS/$name/report.md"
}
run real_alpha1 20 1 data/arlbench/dqn_cc_cartpole.parquet data/arlbench/ppo_cc_cartpole.parquet \
    data/arlbench/ppo_cc_pendulum.parquet
run real_alpha20 20 20 data/arlbench/dqn_cc_cartpole.parquet data/arlbench/ppo_cc_cartpole.parquet \
    data/arlbench/ppo_cc_pendulum.parquet
SYN=results/racing_study/synthetic-tasks
[ -d "$SYN" ] || "$PY" -m erahbo dataset synth --out "$SYN" --tasks 19 --seed 0
run synthetic 10 1 "$SYN"
