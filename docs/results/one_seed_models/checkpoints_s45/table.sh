#!/bin/bash
# One row per draw: as read and expected short entries (strict / ties 1e-6 / ties 0.01), P(none).
# usage: bash table.sh "label=PATTERN" ...   (run in this folder)
P=${PYTHON:-python}
echo "| draw | as read (strict / 1e-6 / 0.01) | expected (strict / 1e-6 / 0.01) | P(none short), strict / 0.01 |"
echo "|---|---|---|---|"
for lp in "$@"; do
  l=${lp%%=*}; p=${lp#*=}
  r=(); e=(); n=()
  for t in 0 1e-6 0.01; do
    out=$($P expected_count.py "$p" $t | tail -1)
    r+=($(echo "$out" | sed -E 's/as read: ([0-9]+) short.*/\1/'))
    e+=($(echo "$out" | sed -E 's/.*expected short ([0-9.]+) of.*/\1/'))
    n+=($(echo "$out" | sed -E 's/.*none short in ([0-9.]+).*/\1/'))
  done
  echo "| $l | ${r[0]} / ${r[1]} / ${r[2]} | ${e[0]} / ${e[1]} / ${e[2]} | ${n[0]} / ${n[2]} |"
done
