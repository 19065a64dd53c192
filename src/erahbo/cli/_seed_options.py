"""The seed-cap and recommendation options shared by ``erahbo optimize`` and ``erahbo tune``
(one definition each; the values are checked by :mod:`erahbo.validation`)."""

from __future__ import annotations

import typer

MAX_SEEDS = typer.Option(None, help="Most seeds one configuration collects in the study "
                         "(default: k_max, or max(k, k_max) for the fixed-k methods; none with "
                         "--preset paper; 0: no limit).")
POOL_SHARE = typer.Option(None, help="Share of all runs that may go beyond --max-seeds to "
                          "re-selected configurations, to tell the best apart (default: the "
                          "preset's; 0: a strict cap).")
RECOMMEND_SEEDS = typer.Option(None, help="Configurations with this many seeds compete for the "
                               "recommendation on their own runs (default: the preset's; 0: "
                               "argmax LCB_MV alone).")
SEED_SHARE = typer.Option(None, help="Share of all runs so far one configuration may hold "
                          "until --max-seeds: the cap grows with the study (default: the "
                          "preset's; 0: --max-seeds from the start).")
RANDOM_INTERLEAVE = typer.Option(None, help="Runs during which every other round is a random "
                                 "configuration (default: the preset's, 50 for erahbo; 0: "
                                 "never).")
RANDOM_TOP = typer.Option(None, help="A random round draws from this share of the "
                          "configurations best by the acquisition (default: the preset's, 0.1 "
                          "for erahbo; 1: uniform over all).")
CHALLENGERS = typer.Option(None, "--challengers/--no-challengers", help="After the random "
                           "rounds, every other round re-runs a configuration whose own runs "
                           "beat the recommendation's (default: the preset's, on for erahbo).")
