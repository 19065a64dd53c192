#!/usr/bin/env bash
# The paper's beta_stop schedule ablation (appendix "Schedule beta_stop", eqs. exp_schedule and
# sig_schedule): ERAHBO with a constant beta_stop = 1 against exponential (gamma = 5, 20, 50)
# and sigmoid (s = 10, 20) schedules rising from 0 to 1, with RAHBO (k=2) as the reference the
# schedules were designed to catch early: docs/results/schedule_study (scripts/ablation_study.sh
# says which studies).
exec "$(dirname "$0")/ablation_study.sh" schedule_study \
    erahbo,erahbo-exp5,erahbo-exp20,erahbo-exp50,erahbo-sig10,erahbo-sig20,rahbo-k2
