"""Scratch (session 55): how often the top-up gate opens (10 repetitions, 30 runs). Run from the
worktree root with ERAHBO_TOPUP=5 PYTHONPATH=src: python topup_probe.py TASK ALPHA SET"""
import sys
from _replay import replay_until
from erahbo.objectives.known_truth import make_task
name, alpha, s = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
task = make_task(name); opened = 0; ks = []
for rep in range(10):
    opt = replay_until(task, "erahbo", alpha, s, rep, 30)
    opened += int(getattr(opt, "topup_opened", False))
    ks.append(sorted(opt.data.k.tolist(), reverse=True)[:5])
print(name, alpha, "opened", opened, "of 10", ks[0])
