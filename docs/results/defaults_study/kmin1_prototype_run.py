"""Run the defaults study with the k_min = 1 prototype (session 10; not part of the package).

The prototype is ``kmin1_prototype.patch`` (against commit e9d04bf): a configuration may enter
the data with one seed; the variance GP imputes its sample variance (its posterior mean given
the configurations with >= 2 seeds, a kriging believer) and the MAP fit leaves it out.
``PROTO_MASK`` says where single-seed configurations are excluded: ``both`` (from the
recommendation and ``B_t``), ``bt`` (from ``B_t`` only) or ``none``.

    git worktree add /tmp/kmin1 e9d04bf && git -C /tmp/kmin1 apply \\
        $PWD/docs/results/defaults_study/kmin1_prototype.patch
    PROTO_MASK=both PYTHONPATH=/tmp/kmin1/src python \\
        docs/results/defaults_study/kmin1_prototype_run.py --variants default-kmin1-both,default \\
        --alpha 10 --repetitions 10 --budget 1000 --out results/kmin1/a10
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import defaults_study as ds

mode = os.environ.get("PROTO_MASK", "both")
ds.VARIANTS[f"default-kmin1-{mode}"] = ("default", {"k_min": 1})
ds.main()
