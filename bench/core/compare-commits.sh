#!/usr/bin/env bash
# Compares two commits on core-flow scenarios: `npm run bench:core` limited to them (each run
# measures its own baselines), on each commit in turn, A B B A A B..., so that a machine whose speed
# drifts, or that runs the second of two runs slower, treats both alike.
#
#   bench/core/compare-commits.sh <commit-a> <commit-b> <scenario[,scenario...]> <embedded|real> [pairs, default 4]
#
# Prints every run's table rows, then per commit and scenario the median ratio and server CPU per
# request.
# Each commit is checked out into a temporary worktree that shares this checkout's node_modules.
# Extra BENCH_* variables (BENCH_NODE_FLAGS, BENCH_ROUNDS...) pass through to every run; a run
# measures what that commit's bench/core/run.ts measures.
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,11p' "$0"
  exit 2
fi
commit_a=$1 commit_b=$2 scenarios=$3 storage=$4 pairs=${5:-4}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/a" >/dev/null 2>&1 || true; git -C "$root" worktree remove --force "$work/b" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
for side in a b; do
  commit=$([ "$side" = a ] && echo "$commit_a" || echo "$commit_b")
  git -C "$root" worktree add --detach "$work/$side" "$commit" >/dev/null 2>&1
  ln -s "$root/node_modules" "$work/$side/node_modules"
done

run() {
  (cd "$work/$1" && BENCH_STORAGE=$storage BENCH_SCENARIOS=$scenarios npx tsx bench/core/run.ts 2>/dev/null) |
    grep -E "^\| (embedded|PostgreSQL)" | sed "s/^/$1 /"
}

for pair in $(seq 1 "$pairs"); do
  if [ $((pair % 2)) = 1 ]; then order="a b"; else order="b a"; fi
  for side in $order; do run "$side"; done
done | tee "$work/rows"

# Columns of a row: | storage | route | baseline req/s | route req/s | ratio | p50 | p99 | cpu | event-loop cpu | failures | meets |
# (older commits' rows have no event-loop column: their tenth field has no slash).
median() { sort -n | awk '{ values[NR] = $1 } END { print values[int((NR + 1) / 2)] }'; }
for scenario in ${scenarios//,/ }; do
  for side in a b; do
    commit=$([ "$side" = a ] && echo "$commit_a" || echo "$commit_b")
    rows=$(grep "^$side " "$work/rows" | grep -F "| $scenario |" || true)
    ratio=$(echo "$rows" | awk -F'|' '{ sub(/%.*/, "", $6); print $6 + 0 }' | median)
    cpu=$(echo "$rows" | awk -F'|' '{ split($9, cpu, "/"); print cpu[2] + 0 }' | median)
    loop=$(echo "$rows" | awk -F'|' '$10 ~ /\// { split($10, loop, "/"); print loop[2] + 0 }' | median)
    echo "$scenario, $commit: median ratio $ratio%, median server CPU $cpu µs/request (event-loop thread ${loop:-?}), over $(echo "$rows" | grep -c .) runs"
  done
done
