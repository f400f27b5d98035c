#!/usr/bin/env bash
# t130: windows under stress (issue 3, "Concurrency stress" and "control
# signal storm").
#  1. tw_stress: 64 threads issue getppid/getpid as fast as they can, threads
#     are created and exit all the while, the process forks 3 times (each
#     child runs 8 threads for a second), and the program marks windows
#     through /dev/exitscope now and then; meanwhile the test sends about a
#     thousand boundaries: kill -USR1 bursts to the process and to its group,
#     `exitscope dump` and `exitscope reset`, on top of --interval 20. Every
#     process's windows must add up to its total (process and per thread),
#     and the totals must equal what the program counted itself (getppid and
#     getpid, per process and per thread), without deadlock, crash or error.
#  2. a storm: tw_sigstorm sends 10,000 SIGUSR1 a second for 2 s to a
#     4-thread tw_stress; it must not crash or stall and counts stay exact.
#  3. tw_forkdev: 100 forks while two threads open, read and close
#     /dev/exitscope; no child may hang, each child's dump is recorded.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0

STRESS_SECONDS=${STRESS_SECONDS:-12}

expect_val() {
  if [ -z "$3" ]; then fail "$1" "expected: $2" "actual:   (no value: missing file, record or field)"
  else expect_eq "$@"; fi
}
recs() { [ -n "$1" ] && [ -s "$1" ] && jq -sc "$2" "$1" 2>/dev/null; }
# reap PID SECONDS: wait for PID at most SECONDS (then SIGKILL and fail);
# sets status and elapsed (ms).
reap() {
  local i t0 t1
  t0=$(date +%s%N)
  for ((i = 0; i < $2 * 50; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.02; done
  if kill -0 "$1" 2>/dev/null; then
    fail "$name: finished within $2 s (deadlock or stall; killed)"
    kill -KILL "$1" 2>/dev/null
  fi
  wait "$1" 2>/dev/null; status=$?
  t1=$(date +%s%N); elapsed=$(( (t1 - t0) / 1000000 ))
}

# The same checks as t120's SUMS_JQ (calls, exits, enters, signals; the
# kernel's fault and preemption counters are checked in t120), plus, with
# $want = {"TID": [getppid, getpid], ...} from the program's own counts:
# every listed thread's windows hold exactly its getppid and getpid calls,
# and the process total is their sum.
# shellcheck disable=SC2016 # a jq program, not shell
SUMS_JQ='
def vec(c): ({exits: c.exits, enters: c.enters, sync_signals: c.sync_signals, async_signals: c.async_signals}
            + ((c.syscalls // {}) | with_entries({key: ("calls:" + .key), value: .value.calls}))
            + ((c.syscalls // {}) | with_entries({key: ("errors:" + .key), value: .value.errors})))
          | with_entries(select(.value != 0));
# ($-parameters: evaluated once; a filter parameter is evaluated again at
# every use, which made this check take minutes on a 55 MB record file)
def add2($a; $b): reduce ($b | to_entries[]) as $e ($a; .[$e.key] += $e.value);
def diff($a; $b; what): (($a + $b) | keys[]) as $k | select(($a[$k] // 0) != ($b[$k] // 0))
    | "\(what) \($k): \($a[$k] // 0) vs \($b[$k] // 0)";
. as $r | $r[-1] as $last
| ([$r[] | .threads[] | select(.tid != 0)] | group_by(.tid)) as $groups
| diff(reduce $r[] as $x ({}; add2(.; vec($x.window))); vec($last.total); "process: sum of windows vs total:"),
  ($groups[] | . as $g
    | diff(reduce $g[] as $x ({}; add2(.; vec($x.window))); vec($g[-1].total);
           "thread \($g[0].tid): sum of windows vs total:")),
  ([$r[] | .threads[] | select(.tid != 0)] | group_by(.tid) | map(.[-1])) as $final
  | ([$last.threads[].tid] as $live | $final[] | select(.tid as $t | any($live[]; . == $t) | not)
     | select(.exited != true) | "thread \(.tid) disappeared without exiting"),
    diff(reduce $final[] as $x ({}; add2(.; vec($x.total))); vec($last.total);
         "every thread'"'"'s last total, summed, vs the process total:"),
  (if [$r[].seq] != [range(0; $r | length)] then "seq is not 0, 1, 2, ..." else empty end),
  (if $last.reason != "exit" then "last record reason \($last.reason), not exit" else empty end),
  ($groups | map({key: (.[0].tid | tostring), value: .}) | from_entries) as $bytid
  | ($want | to_entries[] | .key as $tid | .value as $w
     | ($bytid[$tid] // []) as $g
     | if ($g | length) == 0 then "thread \($tid) (counted by the program) is in no record"
       else
         ([$g[].window.syscalls.getppid.calls // 0] | add) as $pp
         | ([$g[].window.syscalls.getpid.calls // 0] | add) as $pi
         | if [$pp, $pi] != $w then "thread \($tid): windows getppid/getpid \([$pp, $pi]), program counted \($w)"
           else empty end
       end),
  ([$want[][0]] | add // 0) as $pp | ([$want[][1]] | add // 0) as $pi
  | if [$last.total.syscalls.getppid.calls // 0, $last.total.syscalls.getpid.calls // 0] != [$pp, $pi]
    then "process total getppid/getpid \([$last.total.syscalls.getppid.calls, $last.total.syscalls.getpid.calls]), program counted \([$pp, $pi])"
    else empty end'

# check_process NAME JSONL COUNTS: SUMS_JQ over one process's records.
check_process() {
  local want out
  if [ ! -s "$2" ] || [ ! -s "$3" ]; then fail "$1" "missing '$2' or '$3'"; return; fi
  # (in a file: with thousands of threads it is longer than one argument may be)
  want="$SCRATCH/want.$$.json"
  awk 'BEGIN { printf "{" } $1 != "marks" { printf "%s\"%s\": [%s, %s]", sep, $1, $2, $3; sep = ", " } END { print "}" }' "$3" >"$want"
  if ! out=$(jq -sr --slurpfile wants "$want" "\$wants[0] as \$want | $SUMS_JQ" "$2" 2>&1); then fail "$1" "jq failed: ${out:0:500}"; return; fi
  if [ -z "$out" ]; then ok "$1"; else mapfile -t lines < <(head -n 20 <<<"$out"); fail "$1" "${lines[@]}"; fi
}

# ---------------------------------------------------------------------------
# 1. Concurrency stress
name=stress dir="$SCRATCH/$name"
mkdir -p "$dir"
# its own process group, so that kill -USR1 -PGID reaches the fork children
setsid "$XS" run -o "$dir" --interval 20 --format none -- "$T/tw_stress" "$dir" "$STRESS_SECONDS" 64 3 \
  >"$dir.stdout" 2>"$dir.stderr" </dev/null &
pid=$!
if wait_for "$dir.stdout" '^ready'; then
  # signals every ~20 ms (bursts of 4), the group every ~0.5 s, and a dump or
  # reset every ~0.2 s in the background (a command waits for its window, and
  # must not hold back the signals)
  signals=0 groups=0 cmds=0 cmdpids=()
  end=$((SECONDS + STRESS_SECONDS - 2))	# bash's clock: no fork per round
  for ((i = 0; SECONDS < end; i++)); do
    for _ in 1 2 3 4; do kill -USR1 "$pid" 2>/dev/null && signals=$((signals + 1)); done
    if ((i % 25 == 12)); then kill -USR1 -- "-$pid" 2>/dev/null && groups=$((groups + 1)); fi
    if ((i % 10 == 0)); then
      if ((i % 20 == 0)); then timeout 30 "$XS" dump "$pid" "d$i" >/dev/null 2>>"$dir.cmd" &
      else timeout 30 "$XS" reset "$pid" >/dev/null 2>>"$dir.cmd" &
      fi
      cmdpids+=($!); cmds=$((cmds + 1))
    fi
    sleep 0.02
  done
  reap "$pid" 60
  expect_val "$name: exit status (every fork child exited 0 too)" 0 "$status"
  # a failed child says how it ended (tw_stress: "child N failed (status 0x...)")
  [ "$status" = 0 ] || grep -h "failed\|exitscope:" "$dir.stdout" "$dir.stderr" | head -n 5 | sed 's/^/#   /'
  cmdfail=0
  for p in "${cmdpids[@]}"; do wait "$p" || cmdfail=$((cmdfail + 1)); done
  expect_val "$name: every dump/reset command succeeded ($cmds sent)" 0 "$cmdfail"
  [ "$cmdfail" = 0 ] || head -n 5 "$dir.cmd" | sed 's/^/#   /'
  n_files=$(find "$dir" -name 'exitscope-*.jsonl' | wc -l)
  expect_val "$name: one file per process (parent + 3 fork children)" 4 "$n_files"
  main="$dir/exitscope-$pid.jsonl"
  reasons=$(recs "$main" 'map(.reason) | group_by(.) | map("\(.[0])=\(length)") | join(" ")')
  echo "# $name: sent $signals kill -USR1, $groups to the group, $cmds dump/reset commands," \
       "over ${elapsed}+ ms; parent's windows: ${reasons:-none}; $(grep '^total' "$dir.stdout")"
  for r in signal command interval app exit; do
    check "$name: the parent has windows closed by $r" grep -q "$r=" <<<"$reasons"
  done
  for f in "$dir"/exitscope-*.jsonl; do
    p=${f##*/exitscope-}; p=${p%.jsonl}
    check_process "$name: process $p: windows add up and equal the program's own counts" "$f" "$dir/counts-$p"
  done
else
  fail "$name: the program started" "$(head -c 1000 "$dir.stderr")"
  kill -KILL "$pid" 2>/dev/null
fi

# ---------------------------------------------------------------------------
# 2. Control-signal storm: 10,000 SIGUSR1/s for 2 s.
name=storm dir="$SCRATCH/$name"
mkdir -p "$dir"
"$XS" run -o "$dir" --format none -- "$T/tw_stress" "$dir" 4 4 0 >"$dir.stdout" 2>"$dir.stderr" </dev/null &
pid=$!
if wait_for "$dir.stdout" '^ready'; then
  "$T/tw_sigstorm" "$pid" 10000 2 >"$dir.storm" 2>&1
  expect_val "$name: the sender reached the program all along" 0 "$?"
  reap "$pid" 30
  expect_val "$name: exit status" 0 "$status"
  # the program runs 4 s by its own clock; a stall would make it late
  check "$name: no stall: the 4-second program ended within 8 s of the storm's end (took ${elapsed} ms)" \
    test "$elapsed" -lt 8000
  file="$dir/exitscope-$pid.jsonl"
  echo "# $name: $(cat "$dir.storm"); windows: $(recs "$file" 'map(.reason) | group_by(.) | map("\(.[0])=\(length)") | join(" ")')"
  check "$name: the storm closed windows" test "$(recs "$file" '[.[] | select(.reason == "signal")] | length')" -gt 0
  check_process "$name: windows add up and equal the program's own counts" "$file" "$dir/counts-$pid"
else
  fail "$name: the program started" "$(head -c 1000 "$dir.stderr")"
  kill -KILL "$pid" 2>/dev/null
fi

# ---------------------------------------------------------------------------
# 3. Fork while other threads use /dev/exitscope: a child must not inherit
#    the runtime's lock of the emulated file held (it hung, spinning with
#    every signal blocked, in about 19 forks out of 20 before the lock moved
#    into the per-process arena that fork children get zeroed).
name=forkdev dir="$SCRATCH/$name"
mkdir -p "$dir"
timeout 300 "$XS" run -o "$dir" --format none -- "$T/tw_forkdev" 100 >"$dir.stdout" 2>"$dir.stderr" </dev/null
expect_val "$name: exit status (every child exited 0 by itself)" 0 "$?"
expect_val "$name: no child hung" "forks 100 hung 0" "$(cat "$dir.stdout")"
expect_val "$name: one record file per process" 101 "$(find "$dir" -name 'exitscope-*.jsonl' | wc -l)"
expect_val "$name: every child's own dump is in its file" 100 \
  "$(cat "$dir"/exitscope-*.jsonl | jq -s '[.[] | select(.label == "child")] | length')"
