#!/bin/bash
# lane_d.sh NAME "ALPHA:SET ..." VAR=VALUE... : battery cells of the default at /work/wt/s49d (scratch switch)
name=$1; cells=$2; shift 2
cd /work/wt/s49d  # a worktree of 5a0af2c with ../prototype_s49_fit_only.patch applied
for c in $cells; do a=${c%%:*}; s=${c##*:}
  env "$@" PYTHONPATH=src OPENBLAS_NUM_THREADS=1 /work/main/.venv/bin/python benchmarks/continuous_benchmark.py --tasks surrogates,known --methods erahbo --alpha $a --budget 200 --reps 20 --seed $s --checkpoints 50,100,200 --jobs 1 --out /work/s49/bat_${name}_a${a}s$s > /work/s49/bat_${name}_a${a}s$s.log 2>&1
done
