"""Per-task IQM (after 50 / 100 / 200 runs) of the default, fp4, fp4L and gpcL on four floor-atom
surrogates, sets 0-1. usage (from docs/results/one_seed_models, after checkpoints_s49/mix.sh
/tmp/mix): python checkpoints_s52/pertask_table.py"""
import pandas as pd, sys
from scipy.stats import trim_mean
files = {"default": "/tmp/mix/capy03_{c}.csv", "fp4": "checkpoints_s51/bat_fp4_{c}.csv", "fp4L": "checkpoints_s52/bat_fp4L_{c}.csv", "gpcL": "checkpoints_s52/bat_gpcL_{c}.csv"}
for t in ["surr-ppo_cc_acrobot", "surr-ppo_cc_mountain_car", "surr-dqn_cc_mountain_car", "surr-dqn_cc_acrobot"]:
    print(f"\n{t}:\n\n| cell | " + " | ".join(files) + " |\n|---|---|---|---|---|")
    for c in ["a1s0", "a1s1", "a3s0", "a3s1", "a10s0", "a10s1"]:
        row = []
        for k, f in files.items():
            df = pd.read_csv(f.format(c=c)); g = df[df.task == t]
            row.append(" / ".join(f"{trim_mean(g[x], 0.25):.3f}" for x in ("r50", "r100", "r200")))
        print(f"| {c} | " + " | ".join(row) + " |")
