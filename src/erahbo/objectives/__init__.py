"""Objectives: user objectives, synthetic tasks with known MV optimum, dataset replay."""
