#!/bin/bash
# lane_opt.sh NAME METHOD "ALPHA:SET ..." : battery cells of METHOD at 18ba200 (the new default)
name=$1; method=$2; cells=$3
cd /work/wt/s49c
for c in $cells; do a=${c%%:*}; s=${c##*:}
  PYTHONPATH=src OPENBLAS_NUM_THREADS=1 /work/main/.venv/bin/python benchmarks/continuous_benchmark.py --tasks surrogates,known --methods $method --alpha $a --budget 200 --reps 20 --seed $s --checkpoints 50,100,200 --jobs 1 --out /work/s49/bat_${name}_a${a}s$s > /work/s49/bat_${name}_a${a}s$s.log 2>&1
done
