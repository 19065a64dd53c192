"""Run the defaults study with the "random every other round early" prototype (session 10).

``mix_prototype.patch`` (against the session-10 code): while fewer than ``PROTO_MIX`` runs are
spent, every other BO round of ERAHBO picks a uniform random unevaluated configuration instead
of the acquisition's argmax (seeds and stopping rule unchanged). The variable applies to every
ERAHBO variant of the process, so compare with traces of a run without it (the seeds of
``erahbo benchmark`` and of this script agree).

    git worktree add /tmp/mix HEAD && git -C /tmp/mix apply \\
        $PWD/docs/results/defaults_study/mix_prototype.patch
    PROTO_MIX=100 PYTHONPATH=/tmp/mix/src python docs/results/defaults_study/mix_prototype_run.py \\
        --variants default-mix100 --alpha 1 --repetitions 10 --budget 1000 --out results/mix/a1
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import defaults_study as ds

ds.VARIANTS[f"default-mix{os.environ['PROTO_MIX']}"] = ("default", {})
ds.main()
