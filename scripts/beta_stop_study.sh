#!/usr/bin/env bash
# Is ERAHBO's constant beta_stop = 1 too conservative? erahbo (beta_stop 1) against constant
# beta_stop 0.5, 0.25, 0.1 and 0, with the best schedule (exp20) and RAHBO k=2:
# docs/results/beta_stop_study (scripts/ablation_study.sh says which studies).
exec "$(dirname "$0")/ablation_study.sh" beta_stop_study \
    erahbo,erahbo-bs0.5,erahbo-bs0.25,erahbo-bs0.1,erahbo-bs0,erahbo-exp20,rahbo-k2
