import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checkpoints_s45"))
from expected_count import load_peers, iqm_rows, PEERS, HERE
peers = load_peers(str(HERE))
for cell in sys.argv[1].split(","):
    for pe in PEERS:
        kind, d = peers[(cell, pe)]
        vals = {t.replace("surr-", ""): (iqm_rows(d[t]) if kind == "traces" else d[t][0]) for t in sorted(d)}
        print(cell, pe, " ".join(f"{t}:{v[0]:.3f}" for t, v in vals.items()))
