#!/bin/bash
# lane.sh NAME ENV... : the battery cells (alpha 1, sets 0 and 1) of the default under ENV
name=$1; shift
cd /work/wt/s48
for s in 0 1; do
  env "$@" PYTHONPATH=src OPENBLAS_NUM_THREADS=1 /work/main/.venv/bin/python benchmarks/continuous_benchmark.py --tasks surrogates,known --methods erahbo --alpha 1 --budget 200 --reps 20 --seed $s --checkpoints 50,100,200 --jobs 1 --out /work/s48/bat_${name}_a1s$s > /work/s48/bat_${name}_a1s$s.log 2>&1
done
