#!/bin/bash
# lane.sh WORKTREE NAME METHOD "ALPHA:SET ..." [VAR=VALUE ...]: battery cells of METHOD run from
# WORKTREE (a worktree of the commit measured, a scratch patch applied where one is named), one
# after another on one core, under the environment VAR=VALUE (a scratch switch), into
# ${OUTDIR:-/work/s49}/${PREFIX}_NAME_a<ALPHA>s<SET> (and .log). BUDGET (200), REPS (20), CHECKPOINTS
# (50,100,200), PREFIX (bat) and TASKS (surrogates,known) may be set in the environment. Session 49's calls:
#   lane.sh /work/wt/s49 capy03 erahbo "3:1 10:1" ERAHBO_CAPY=0.3   # acbf9e4 + prototype_s48_switches.patch
#   lane.sh /work/wt/s49 def erahbo "3:1 10:1"
#   lane.sh /work/wt/s49b rs03 erahbo-rs0.3 "1:2 3:2 10:2"           # d9264dc (also rs015, rs06, def)
#   lane.sh /work/wt/s49c new erahbo "1:3 3:3 10:3"                   # 18ba200 (old: erahbo-rs0)
#   lane.sh /work/wt/s49d fitonly erahbo "1:2 3:2 10:2" ERAHBO_SPREAD_FIT_ONLY=1  # 5a0af2c + prototype_s49_fit_only.patch
#   BUDGET=500 REPS=10 CHECKPOINTS=50,100,200,500 PREFIX=b500 lane.sh /work/wt/s49c new erahbo "1:0 10:0"
wt=$1; name=$2; method=$3; cells=$4; shift 4
cd "$wt" || exit 1
for c in $cells; do a=${c%%:*}; s=${c##*:}; out=${OUTDIR:-/work/s49}/${PREFIX:-bat}_${name}_a${a}s$s
  env "$@" PYTHONPATH=src OPENBLAS_NUM_THREADS=1 /work/main/.venv/bin/python \
    benchmarks/continuous_benchmark.py --tasks "${TASKS:-surrogates,known}" --methods "$method" --alpha "$a" \
    --budget "${BUDGET:-200}" --reps "${REPS:-20}" --seed "$s" \
    --checkpoints "${CHECKPOINTS:-50,100,200}" --jobs 1 --out "$out" > "$out.log" 2>&1
done
