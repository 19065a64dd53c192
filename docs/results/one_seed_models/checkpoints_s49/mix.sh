#!/bin/bash
# mix.sh DIR: links the cap's and the default's cells of sessions 48-49 as DIR/{capy03,def}_<cell>.csv
# (alpha 1 sets 0-1 and alpha 3 / 10 set 0 from session 48; the rest from session 49), for
# ../checkpoints_s45/expected_count.py "DIR/capy03_{cell}.csv" and
# ../checkpoints_s44/pair.py "DIR/capy03_{cell}.csv" "DIR/def_{cell}.csv" (SETS=0,1,2,3)
dir=${1:-/tmp/mix}; here=$(cd "$(dirname "$0")" && pwd); mkdir -p "$dir"
for v in capy03 def; do
  for c in a1s0 a1s1 a3s0 a10s0; do ln -sf "$here/../checkpoints_s48/bat_${v}_$c.csv" "$dir/${v}_$c.csv"; done
  for c in a3s1 a10s1; do ln -sf "$here/bat_${v}_$c.csv" "$dir/${v}_$c.csv"; done
done
for c in a1s2 a3s2 a10s2; do
  ln -sf "$here/bat_rs03_$c.csv" "$dir/capy03_$c.csv"; ln -sf "$here/bat_def_$c.csv" "$dir/def_$c.csv"
done
for c in a1s3 a3s3 a10s3; do  # set 3: the new default against the old one (lane.sh /work/wt/s49c)
  ln -sf "$here/bat_new_$c.csv" "$dir/capy03_$c.csv"; ln -sf "$here/bat_old_$c.csv" "$dir/def_$c.csv"
done
