#!/usr/bin/env bash
# Background generation of the learning-curve tables (data/README.md, "Learning-curve tables"):
# ARLBench runs evaluated at 10 checkpoints (--eval-steps 10), 128 Sobol configurations x 20
# seeds, one table after the other on ONE worker under `nice -n 19`: dqn_cc_cartpole,
# dqn_cc_acrobot, ppo_cc_cartpole (DQN first: cheaper). Shards go to data/arlbench_curves;
# scripts/commit_lc_shards.sh commits them.
#
#   scripts/generate_curves.sh          # start (detached; refuses if one is running)
#   scripts/generate_curves.sh status   # pid, last log lines, shards done
#   scripts/generate_curves.sh stop     # stop it (finished shards are kept)
#
# Resume: run it again; finished shards are skipped. The code that runs is a copy of HEAD's
# src/ taken at start ($RUN/code, its commit in $RUN/code/COMMIT), so editing the worktree
# never changes a running generation. Needs `erahbo arlbench setup`.
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=${RUN:-.lc-run}              # gitignored: log, pid, frozen code
PY=${PY:-.venv/bin/python}       # an interpreter with erahbo's dependencies
CONFIGS=${CONFIGS:-128}
SEEDS=${SEEDS:-20}
TASKS=${TASKS:-"dqn_cc_cartpole dqn_cc_acrobot ppo_cc_cartpole"}
OUT=data/arlbench_curves
mkdir -p "$RUN"

running() { [[ -f "$RUN/generate.pid" ]] && kill -0 "$(cat "$RUN/generate.pid")" 2>/dev/null; }

case "${1:-start}" in
  stop)
    if running; then kill -- -"$(cat "$RUN/generate.pid")"; echo "stopped"; else echo "not running"; fi
    rm -f "$RUN/generate.pid"
    exit 0 ;;
  status)
    if running; then echo "running: pid $(cat "$RUN/generate.pid") (code $(cat "$RUN/code/COMMIT"))"
    else echo "not running"; fi
    for t in $TASKS; do
      echo "$t: $(ls "$OUT/shards/$t"/shard-*.parquet 2>/dev/null | wc -l) shards"
    done
    tail -n 3 "$RUN/generate.log" 2>/dev/null || true
    exit 0 ;;
  start) ;;
  *) echo "usage: $0 [start|status|stop]" >&2; exit 2 ;;
esac

if running; then
  echo "already running (pid $(cat "$RUN/generate.pid")); $0 stop first" >&2
  exit 1
fi
rm -rf "$RUN/code" && mkdir -p "$RUN/code"
git archive --format=tar HEAD src | tar -x -C "$RUN/code"
git rev-parse HEAD > "$RUN/code/COMMIT"
cmd="export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/$RUN/code/src OPENBLAS_NUM_THREADS=1;"
cmd+=" echo \"start \$(date -u +%FT%TZ) code \$(cat $RUN/code/COMMIT)\";"
for t in $TASKS; do
  cmd+=" $PY -m erahbo dataset generate --task $t --configs $CONFIGS --seeds $SEEDS"
  cmd+=" --eval-steps 10 --shard-size 8 --out $OUT --workers 1;"
done
cmd+=" echo \"done \$(date -u +%FT%TZ)\""
setsid nohup nice -n 19 bash -c "$cmd" >>"$RUN/generate.log" 2>&1 </dev/null &
echo $! >"$RUN/generate.pid"
echo "started: pid $!, log $RUN/generate.log, code $(cat "$RUN/code/COMMIT")"
