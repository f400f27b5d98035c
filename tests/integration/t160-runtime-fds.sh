#!/usr/bin/env bash
# t160: a program that takes the descriptor numbers the runtime holds
# (th_fd_takeover) behaves as natively, and the runtime neither writes into
# the program's files nor loses what it gathered while it has room.
#  - all: dup2 onto every descriptor up to the soft limit (the program holds
#    the whole table), writes, close_range(3, ~0);
#  - high: dup2 onto 1000..1099, where the runtime's descriptors sit when
#    the limit leaves no room above it, then a window by /dev/exitscope;
#  - close: close every number up to the limit;
#  - spawn: posix_spawn (a child sharing our memory) with dup2 file actions
#    onto 1000..1009; bash writes to each: the parent's records stay whole.
# Two limits: soft below hard (the runtime's descriptors live above the
# soft limit, out of the program's reach) and soft = hard (they live high
# below it and are moved away when the program takes their number; with
# the whole table taken and without CAP_SYS_RESOURCE there is nowhere to
# move them: the log says the runtime lost one, and the program's own
# files and output are still exactly the native ones).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0

hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt 2048 ]; then
  fail "t160 prerequisite: a hard descriptor limit of at least 2048 (it is $hard)"; exit 1
fi

# case NAME MODE ULIMIT-ARGS...: run th_fd_takeover MODE natively and under
# exitscope with those limits; sets $dir, $xs_pid
case_run() {
  local name=$1 mode=$2; shift 2
  dir=$SCRATCH/$name
  mkdir -p "$dir/native" "$dir/xs" "$dir/out"
  (ulimit "$@" && cd "$dir/native" && exec "$T/th_fd_takeover" "$mode" taken.txt) \
    >"$dir/native.out" 2>"$dir/native.err" </dev/null
  echo $? >"$dir/native.status"
  (ulimit "$@" && cd "$dir/xs" && exec "$XS" run -o "$dir/out" -- "$T/th_fd_takeover" "$mode" taken.txt) \
    >"$dir/xs.out" 2>"$dir/xs.err" </dev/null
  echo $? >"$dir/xs.status"
  xs_pid=$(find "$dir/out" -name 'run-*.jsonl' | sed 's/.*run-\([0-9]*\)\.jsonl/\1/')
}

# the program's view: output, status and the file it wrote
same_as_native() {
  local name=$1 d=()
  cmp -s "$dir/native.out" "$dir/xs.out" || d+=("stdout: $(diff "$dir/native.out" "$dir/xs.out" | head -n 4)")
  cmp -s "$dir/native.status" "$dir/xs.status" ||
    d+=("status: native $(cat "$dir/native.status"), exitscope $(cat "$dir/xs.status")")
  [ ! -e "$dir/native/taken.txt" ] || cmp -s "$dir/native/taken.txt" "$dir/xs/taken.txt" ||
    d+=("the program's file differs: $(head -c 300 "$dir/xs/taken.txt" | tr -c 'p\n' '?')")
  if [ "${#d[@]}" -eq 0 ]; then ok "$name: output, status and the program's file as natively ($(cat "$dir/native.out"))"
  else fail "$name: output, status and the program's file as natively" "${d[@]}" "$(head -n 3 "$dir/xs.err")"; fi
}

# windows WANT: the record file's windows as "reason:label:getppid" lines
windows() { jq -r '"\(.reason):\(.label // ""):\(.window.syscalls.getppid.calls // 0)"' "$dir/out/exitscope-$xs_pid.jsonl" 2>&1 | tr '\n' ' '; }
run_events() { jq -r .event "$dir/out/run-$xs_pid.jsonl" 2>&1 | tr '\n' ' '; }

# --- soft below hard: out of reach, nothing lost ---
case_run all-room all -Sn 1024
same_as_native "all, soft limit 1024 below the hard limit"
expect_eq "all, soft limit 1024: the exit record has the program's 100 getppid" "exit::100 " "$(windows)"
expect_eq "all, soft limit 1024: the run file has its start and end" "start end " "$(run_events)"
check "all, soft limit 1024: the runtime lost nothing (no warning)" sh -c "! grep -q 'took descriptor' '$dir/xs.err'"

case_run high-room high -Sn 1024
same_as_native "high, soft limit 1024"
expect_eq "high, soft limit 1024: the window by /dev/exitscope and the exit" "app:taken:100 exit::100 " "$(windows)"
expect_eq "high, soft limit 1024: the run file has its start and end" "start end " "$(run_events)"

# --- soft = hard: high below the limit, moved when taken ---
case_run high-full high -n 2048
same_as_native "high, soft = hard = 2048"
expect_eq "high, soft = hard = 2048: every runtime descriptor taken was moved: both windows" \
  "app:taken:100 exit::100 " "$(windows)"
expect_eq "high, soft = hard = 2048: the run file has its start and end" "start end " "$(run_events)"

# a program that closes every number up to its limit: EBADF for the ones
# it does not have, the runtime's included, wherever they are
for lim in "-Sn 1024" "-n 2048"; do
  # shellcheck disable=SC2086  # "-Sn 1024": two words for ulimit
  case_run "close${lim// /}" close $lim
  same_as_native "close every descriptor, ulimit $lim"
done

case_run spawn-full spawn -n 2048
same_as_native "spawn, soft = hard = 2048"
expect_eq "spawn, soft = hard = 2048: the parent's exit record has its 100 getppid" "exit::100 " "$(windows)"
expect_eq "spawn, soft = hard = 2048: the run file has the parent's start and end and the child's exec and end" \
  "start:$xs_pid exec end end:$xs_pid " \
  "$(jq -r 'if .pid == '"$xs_pid"' then "\(.event):\(.pid)" else .event end' "$dir/out/run-$xs_pid.jsonl" 2>&1 | tr '\n' ' ')"

case_run all-full all -n 2048
same_as_native "all, soft = hard = 2048"
if grep -q "the program took descriptor [0-9]*, one of the runtime's, and no descriptor was free" "$dir/xs.err"; then
  ok "all, soft = hard = 2048: the log says the runtime lost a descriptor it could not move"
else
  # with CAP_SYS_RESOURCE the runtime moves above a raised hard limit
  expect_eq "all, soft = hard = 2048: nothing lost (CAP_SYS_RESOURCE): the exit record" "exit::100 " "$(windows)"
fi
