#!/usr/bin/env bash
# One ablation of ERAHBO, three studies: the three complete real ARLBench tables
# (dqn_cc_cartpole 512 x 50, ppo_cc_cartpole and ppo_cc_pendulum 128 x 50) at alpha = 1 and
# alpha = 20 (above every table's alpha*), 20 repetitions x 1000 runs; and the 19 synthetic
# paper-shaped tasks of `erahbo dataset synth --tasks 19 --seed 0` at alpha = 1, 10
# repetitions x 1000 runs. Reports are copied into docs/results/<NAME>/{real_alpha1,
# real_alpha20,synthetic}. Resumable (finished traces are kept in results/<NAME>).
#
# These ablations (session 4) vary the paper's ERAHBO, so every method runs under
# `--preset paper` (PRESET=default for erahbo's defaults instead): `erahbo` is then the paper's
# settings and `erahbo-exp20`, `erahbo-bs0.25`, `erahbo-race` ... change one option of them,
# as when the reports in docs/results/{racing,schedule,beta_stop}_study were made (commit
# c1bb8ba, before erahbo's defaults changed in 4c1b7c0). Checked in session 10: the racing
# study's real_alpha1 pass reproduces docs/results/racing_study/real_alpha1/ranks.csv byte
# for byte (4.5 minutes on one core).
#
#   WORKERS=1 scripts/ablation_study.sh NAME METHODS
#   e.g. scripts/ablation_study.sh schedule_study erahbo,erahbo-exp20,rahbo-k2
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=$1 METHODS=$2
PY=${PY:-.venv/bin/python}
DOCS=docs/results/$NAME
REAL=(data/arlbench/dqn_cc_cartpole.parquet data/arlbench/ppo_cc_cartpole.parquet
      data/arlbench/ppo_cc_pendulum.parquet)
run() {  # run PASS REPETITIONS ALPHA DATA...
  local pass=$1 reps=$2 alpha=$3 out=results/$NAME/$1
  shift 3
  "$PY" -m erahbo benchmark "$@" --methods "$METHODS" --repetitions "$reps" --budget 1000 \
      --alpha "$alpha" --out "$out" --workers "${WORKERS:-1}" --preset "${PRESET:-paper}"
  mkdir -p "$DOCS/$pass"
  rm -rf "$DOCS/$pass/figures"
  cp -r "$out/report/report.md" "$out/report/ranks.csv" "$out/report/figures" "$DOCS/$pass/"
  echo "report: $DOCS/$pass/report.md"
}
run real_alpha1 20 1 "${REAL[@]}"
run real_alpha20 20 20 "${REAL[@]}"
SYN=results/synthetic-19-tasks
[ -d "$SYN" ] || "$PY" -m erahbo dataset synth --out "$SYN" --tasks 19 --seed 0
run synthetic 10 1 "$SYN"
