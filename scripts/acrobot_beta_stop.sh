#!/usr/bin/env bash
# ERAHBO's beta_stop on DQN Acrobot, the real table where most configurations never learn
# (docs/results/acrobot_beta_stop): beta_stop 1 (paper), 0.25, 0, the exp20 schedule, the
# racing rule and RAHBO k=2, 20 repetitions x 1000 runs at alpha 1 and 20 (Vizier). About
# 2 min per alpha on one core. Reports are copied into docs/results/acrobot_beta_stop/alpha{1,20}.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DOCS=docs/results/acrobot_beta_stop
for a in 1 20; do
  out=results/acrobot_bs_a$a
  "$PY" -m erahbo benchmark data/arlbench/dqn_cc_acrobot.parquet \
      --methods erahbo,erahbo-bs0.25,erahbo-bs0,erahbo-exp20,erahbo-race,rahbo-k2 \
      --repetitions 20 --budget 1000 --alpha "$a" --out "$out" --workers "${WORKERS:-1}"
  "$PY" -m erahbo report "$out"
  mkdir -p "$DOCS/alpha$a"
  rm -rf "$DOCS/alpha$a/figures"
  cp -r "$out/report/report.md" "$out/report/figures" "$DOCS/alpha$a/"
done
