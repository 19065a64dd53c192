#!/usr/bin/env bash
# Commit the new learning-curve shards (and plans, and merged tables) under data/arlbench_curves
# on branch `lc`; nothing else is staged or committed. Safe to call periodically:
#
#   scripts/commit_lc_shards.sh
#
# Prints what it committed, or "nothing new". Refuses on another branch.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=data/arlbench_curves
branch=$(git rev-parse --abbrev-ref HEAD)
if [[ "$branch" != "lc" ]]; then
  echo "on branch $branch, not lc: not committing" >&2
  exit 1
fi
new=$(git status --porcelain --untracked-files=all -- "$DATA" | wc -l)
if [[ "$new" -eq 0 ]]; then
  echo "nothing new"
  exit 0
fi
shards=$(git status --porcelain --untracked-files=all -- "$DATA" | grep -c 'shard-' || true)
for i in 1 2 3 4 5; do  # another git command may hold the index lock for a moment
  if git add -- "$DATA" && git commit -q -m "data: learning-curve shards (+$shards shard files, $new paths, $(date -u +%H:%M) UTC)" -- "$DATA"; then
    git log -1 --format='%h %s'
    du -sh "$DATA" | cut -f1 | sed 's/^/size of the curve data: /'
    exit 0
  fi
  sleep 5
done
echo "commit failed (see git's message above)" >&2
exit 1
