#!/usr/bin/env bash
# bench/run_window.sh: how long a run-wide window takes across a tree of
# PROCS processes: `exitscope dump RUN` timed from outside, from the command's
# start to its return (it returns once every process's record is written),
# ROUNDS times, with the tree
#   - idle: a shell and PROCS - 1 `sleep` children (blocked in nanosleep);
#   - busy: a shell and PROCS - 1 shells spinning on `while :; do :; done`
#     (no system calls: every process's service thread competes for the
#     CPUs with PROCS - 1 spinning ones).
# Prints a markdown table: median and worst in milliseconds, and the number
# of processes each window closed (always PROCS, or the table says so).
# Environment: ROUNDS (21), PROCS (50), XS_BUILD (build).
set -u -o pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
XS_BUILD=${XS_BUILD:-$root/build}
XS=$XS_BUILD/exitscope
ROUNDS=${ROUNDS:-21}
PROCS=${PROCS:-50}

die() { echo "run_window: $*" >&2; exit 1; }
[ -x "$XS" ] || die "missing '$XS' (run make)"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/xs-runwin.XXXXXX")
pid=
cleanup() {
  [ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null   # the run's own process group (setsid below)
  rm -rf "$TMP"
}
trap cleanup EXIT
cd "$TMP" || exit 2

# measure MODE CHILD: "median | worst | closed" (ms) of ROUNDS dump RUN
measure() {
  local mode=$1 child=$2 i t0 t1 n
  rm -rf exitscope-*
  # its own session, so that cleanup reaches every process of the tree
  setsid "$XS" run --format none -- sh -c "for i in \$(seq $((PROCS - 1))); do $child & done; exec sleep 100000" \
    >"$mode.out" 2>"$mode.err" </dev/null &
  pid=$!
  for ((i = 0; i < 300; i++)); do
    n=$(grep -c '"event": "start"\|"event": "exec"' "exitscope-$pid/run.jsonl" 2>/dev/null)
    [ "${n:-0}" -ge $((2 * PROCS)) ] && break   # a start and an exec each (the shell execs sleep)
    sleep 0.05
  done
  sleep 0.5
  : >"$mode.ms"
  for ((i = 0; i < ROUNDS; i++)); do
    t0=$(date +%s%N)
    "$XS" dump "exitscope-$pid" "r$i" >"$mode.dump" 2>&1 || die "$mode: dump RUN failed: $(grep -v ': window #' "$mode.dump" | tail -n 3)"
    t1=$(date +%s%N)
    echo "$(( (t1 - t0) / 1000 )) $(sed -n 's/^ok run window [0-9]*: \([0-9]*\) processes/\1/p' "$mode.dump")" >>"$mode.ms"
  done
  kill -KILL -- "-$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  pid=
  sort -g "$mode.ms" | awk -v want="$PROCS" '{ v[++n] = $1 / 1000; if ($2 != want) short++ }
    END { printf "%.1f | %.1f | %s\n", v[int((n + 1) / 2)], v[n], short ? short " rounds closed fewer than " want : "all " want " every round" }'
}

echo "| tree ($PROCS processes) | median ms | worst ms | processes closed |"
echo "|---|---|---|---|"
echo "| idle (sleep) | $(measure idle 'sleep 1000') |"
echo "| busy (spinning shells) | $(measure busy "sh -c 'while :; do :; done'") |"
