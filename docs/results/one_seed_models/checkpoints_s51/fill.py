"""fill.py VARIANT.csv DEFAULT.csv OUT.csv: a variant's compact records run on a subset of the
tasks (the five surrogates whose returns have a floor atom), completed with the default's rows
of the other tasks. Exact: without a floor atom ``failure_prior_runs`` changes nothing
(``erahbo.gp.failure_mode``; checked on bat_fp4_*: the other six tasks equal the default's
to the last digit in every cell)."""
import sys

import pandas as pd

var, ref, out = sys.argv[1:4]
v, d = pd.read_csv(var), pd.read_csv(ref)
method = v["method"].iloc[0]
rest = d[~d["task"].isin(set(v["task"]))].assign(method=method)
full = pd.concat([v, rest]).sort_values(["task", "rep"])
full.to_csv(out, index=False)
print(f"wrote {out}: {len(v)} rows run, {len(rest)} from the default")
