#!/bin/bash
# lane_b500.sh NAME METHOD ALPHA SET : one battery cell at budget 500, 10 repetitions, at 18ba200
cd /work/wt/s49c
PYTHONPATH=src OPENBLAS_NUM_THREADS=1 /work/main/.venv/bin/python benchmarks/continuous_benchmark.py --tasks surrogates,known --methods $2 --alpha $3 --budget 500 --reps 10 --seed $4 --checkpoints 50,100,200,500 --jobs 1 --out /work/s49/b500_$1_a$3s$4 > /work/s49/b500_$1_a$3s$4.log 2>&1
