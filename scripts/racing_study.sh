#!/usr/bin/env bash
# Ablation of ERAHBO's stopping rule: the paper's GP-based confidence rule (erahbo) against a
# racing rule on sample statistics after SMAC's intensifier (erahbo-race: seeds double, k_min,
# 2 k_min, ... <= k_max, while x_t's sample MV keeps up with the best other one), with RAHBO
# k=2 and k=20 as the fixed-k ends: docs/results/racing_study (scripts/ablation_study.sh says
# which studies).
exec "$(dirname "$0")/ablation_study.sh" racing_study erahbo,erahbo-race,rahbo-k2,rahbo-k20
