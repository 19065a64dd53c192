"""Scratch: the log variance GP's amplitude s_v after RUNS runs (session 54):
python sv_at.py TASK ALPHA SET RUNS REPS"""
import math
import sys

sys.path.insert(0, "benchmarks")
from recommendation_probe import replay_until  # noqa: E402

from erahbo.gp.variance_noise import TRIGAMMA_HALF  # noqa: E402
from erahbo.objectives.known_truth import make_task  # noqa: E402

task = make_task(sys.argv[1])
alpha, s, runs = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for rep in range(int(sys.argv[5])):
    opt = replay_until(task, "erahbo", alpha, s, rep, runs)
    st = opt.models.settings
    print(rep, "s_v %.2f" % math.sqrt(TRIGAMMA_HALF / st.hyper_v.noise), flush=True)
