"""scratch: continuous benchmark with arbitrary Optimizer options.
usage: run.py TASKS ALPHA SET REPS OUT JOBS name='{"opt": v}' ..."""
import sys, json
from erahbo.experiments.continuous import ContinuousSettings, run_continuous_study
from erahbo.experiments.methods import MethodSpec, parse_method
from erahbo.objectives.known_truth import make_task
def main():
    tasks_arg, alpha, sset, reps, out, jobs = sys.argv[1:7]
    names = tasks_arg.split(",")
    tasks = [make_task(n) for n in names]
    methods = []
    for a in sys.argv[7:]:
        n, js = a.split("=", 1)
        if js.startswith("{"):
            methods.append(MethodSpec(name=n, label=n, method="erahbo", options=json.loads(js)))
        else:
            methods.append(parse_method(js))
    st = ContinuousSettings(budget=200, alpha=float(alpha), seed=int(sset))
    run_continuous_study(tasks, methods, int(reps), st, out, jobs=int(jobs))

if __name__ == '__main__':
    main()
