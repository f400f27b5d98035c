#!/usr/bin/env bash
# t120: windows on demand (issue 3: "Exactness" and "Bad input").
#  - exactness: tw_marks issues known calls between /dev/exitscope marks, in
#    the main thread and in worker threads; each window holds exactly those
#    calls per system call and per thread, the marks' own traffic is not
#    counted, labels/reasons/seq are right, windows add up to the total;
#  - the control signal: kill -USR1 while the program blocks every signal,
#    kill -USR1 -PGID (parent and fork child), --signal USR2, --signal none
#    (USR1 then kills as natively), the program's own SIGUSR1 handler wins;
#  - exitscope dump/reset through the control socket, while the program
#    blocks or ignores every signal; unknown commands; another user; a
#    process without exitscope;
#  - --interval; /dev/exitscope (malformed writes, live read, no-op without
#    exitscope); --format gramine/none and --log;
#  - bad input: a missing or unwritable -o DIR is refused before the program
#    runs.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

# The other-user checks run programs as nobody, who may not be able to reach
# the build tree (a clone in a mode-700 directory): copies in a directory
# everyone can read, laid out as the build is (exitscope finds lib/ beside it).
shared=$(mktemp -d "${TMPDIR:-/tmp}/xs-t120.XXXXXX")
trap 'rm -rf "$SCRATCH" "$shared"' EXIT
chmod 755 "$shared"; mkdir -p "$shared/bin/lib"
cp "$XS" "$shared/bin/exitscope"; cp "$XS_BUILD/lib/libexitscope.so" "$shared/bin/lib/"
cp "$T/tw_idle" "$shared/bin/"; chmod -R a+rX "$shared/bin"
XS_NOBODY=$shared/bin/exitscope
T_NOBODY=$shared/bin
ulimit -c 0

# expect_val NAME EXPECTED ACTUAL: expect_eq, but a missing value fails.
expect_val() {
  if [ -z "$3" ]; then fail "$1" "expected: $2" "actual:   (no value: missing file, record or field)"
  else expect_eq "$@"; fi
}

# recs FILE FILTER: FILTER over all records of FILE, slurped ("" on error).
recs() { [ -n "$1" ] && [ -s "$1" ] && jq -sc "$2" "$1" 2>/dev/null; }

# SUMS_JQ: over the slurped records of one process, print one line per
# violation of "each call lands in exactly one window":
#  - per process: the windows' counters (exits, enters, signals, faults,
#    preemptions, calls and errors per system call) add up to the last total;
#  - per thread (by tid): its windows add up to its total where it last
#    appears; a thread that disappears from the list had exited;
#  - every thread's last total (live or gone), summed, is the process total
#    (calls, exits, enters, signals);
#  - seq runs 0, 1, 2, ... and the last record has reason exit.
# shellcheck disable=SC2016 # a jq program, not shell
SUMS_JQ='
def nz: with_entries(select(.value != 0));
def vec(c): ({exits: c.exits, enters: c.enters, sync_signals: c.sync_signals,
              async_signals: c.async_signals, minor_faults: c.minor_faults,
              major_faults: c.major_faults, preemptions: c.preemptions}
            + ((c.syscalls // {}) | with_entries({key: ("calls:" + .key), value: .value.calls}))
            + ((c.syscalls // {}) | with_entries({key: ("errors:" + .key), value: .value.errors}))) | nz;
def kernel: with_entries(select(.key | test("faults|preemptions")));
def nokernel: with_entries(select(.key | test("faults|preemptions") | not));
def pick: if $kern then kernel else nokernel end;
# ($-parameters: evaluated once; a filter parameter is evaluated again at
# every use, which made this check take minutes on a 55 MB record file)
def add2($a; $b): reduce ($b | to_entries[]) as $e ($a; .[$e.key] += $e.value);
def diff($a; $b; what): (($a + $b) | keys[]) as $k | select(($a[$k] // 0) != ($b[$k] // 0))
    | "\(what) \($k): \($a[$k] // 0) vs \($b[$k] // 0)";
. as $r | $r[-1] as $last |
  diff(reduce $r[] as $x ({}; add2(.; vec($x.window) | pick)); vec($last.total) | pick;
       "process: sum of windows vs total:"),
  ([$r[] | .threads[] | select(.tid != 0)] | group_by(.tid)[] | . as $g
    | diff(reduce $g[] as $x ({}; add2(.; vec($x.window) | pick)); vec($g[-1].total) | pick;
           "thread \($g[0].tid): sum of windows vs total:")),
  if $kern then empty else
  ([$r[] | .threads[] | select(.tid != 0)] | group_by(.tid) | map(.[-1])) as $final
  | ([$last.threads[].tid] as $live | $final[] | select(.tid as $t | any($live[]; . == $t) | not)
     | select(.exited != true) | "thread \(.tid) disappeared without exiting"),
    diff(reduce $final[] as $x ({}; add2(.; vec($x.total) | nokernel)); vec($last.total) | nokernel;
         "every thread'"'"'s last total, summed, vs the process total:"),
  (if [$r[].seq] != [range(0; $r | length)] then "seq is not 0, 1, 2, ...: \([$r[].seq])" else empty end),
  (if $last.reason != "exit" then "last record reason \($last.reason), not exit" else empty end)
  end'

# check_sums NAME FILE [kernel]: ok when SUMS_JQ finds nothing; with
# "kernel", the same for the kernel's counters only (faults, preemptions),
# otherwise for everything else.
check_sums() {
  local out kern=false
  [ "${3:-}" = kernel ] && kern=true
  if [ ! -s "$2" ]; then fail "$1" "no records in '$2'"; return; fi
  if ! out=$(jq -sr --argjson kern "$kern" "$SUMS_JQ" "$2" 2>&1); then fail "$1" "jq failed: $out"; return; fi
  if [ -z "$out" ]; then ok "$1"; else mapfile -t lines < <(head -n 20 <<<"$out"); fail "$1" "${lines[@]}"; fi
}

# wait_records FILE JQ_COND COUNT [SECONDS]: until FILE has COUNT records
# matching JQ_COND.
wait_records() {
  local i
  for ((i = 0; i < ${4:-10} * 50; i++)); do
    [ "$(recs "$1" "[.[] | select($2)] | length")" = "$3" ] && return 0
    sleep 0.02
  done
  return 1
}

# ---------------------------------------------------------------------------
# Exactness from inside the program: tw_marks.
name=marks
dir="$SCRATCH/$name"
mkdir -p "$dir"
timeout -k 5 60 "$XS" run -o "$dir" --format none -- "$T/tw_marks" >"$dir.stdout" 2>"$dir.stderr" </dev/null
expect_val "$name: exit status" 0 "$?"
file="$dir/exitscope-$(awk '$1 == "main" { print $2 }' "$dir.stdout").jsonl"
expect_val "$name: every mark returned 0" "marks=0" "$(grep '^marks=' "$dir.stdout")"
expect_val "$name: reasons and labels" \
  '[["app","start"],["app","a"],["app","b"],["app",null],["app","spawn"],["app","w1"],["app","w2"],["app","join"],["app","end"],["exit",null]]' \
  "$(recs "$file" '[.[] | [.reason, .label]]')"
check_sums "$name: windows add up to the total, per process and per thread" "$file"
check_sums "$name: faults and preemptions of the windows add up to the total" "$file" kernel
while read -r _ label want; do
  if [ "$label" = - ]; then sel='.label == null and .reason == "app"'; else sel=".label == \"$label\""; fi
  got=$(recs "$file" "[.[] | select($sel)][0] | [.threads[] | select((.window.syscalls | length) > 0)
         | {key: (.tid | tostring), value: (.window.syscalls | map_values(\"\(.calls)/\(.errors)\"))}] | from_entries")
  expect_val "$name: window $label: exactly the calls issued, per thread" "$(jq -cS . <<<"$want")" "$(jq -cS . <<<"${got:-null}" 2>/dev/null)"
  expect_val "$name: window $label: process counts are the threads' (no mark traffic)" \
    "$(jq -cS '[.[] | to_entries[]] | group_by(.key) | map({key: .[0].key, value: ([.[].value | split("/") | map(tonumber)] | transpose | map(add) | map(tostring) | join("/"))}) | from_entries' <<<"$want")" \
    "$(recs "$file" "[.[] | select($sel)][0].window.syscalls | map_values(\"\(.calls)/\(.errors)\")" | jq -cS . 2>/dev/null)"
  expect_val "$name: window $label: exits == enters == sum of calls" true \
    "$(recs "$file" "[.[] | select($sel)][0].window | .exits == .enters and .exits == ([.syscalls[].calls] | add)")"
done < <(grep '^expect ' "$dir.stdout")
workers=$(awk '$1 == "worker" { printf "%s%s", sep, $3; sep = "," }' "$dir.stdout")
expect_val "$name: the workers are listed as exited in the window they exited in" true \
  "$(recs "$file" "[.[] | select(.label == \"join\") | .threads[] | select(.tid == ($workers)) | .exited] | length == 3 and all")"
expect_val "$name: natively every mark returns -1" "marks=-1" "$("$T/tw_marks" | grep '^marks=')"

# ---------------------------------------------------------------------------
# Outside boundaries on tw_idle (one getppid per 5 ms until DIR.stop exists).
# start NAME MODE [RUN OPTION...]: start it under exitscope in the
# background; sets dir, pid, file. stop: make it finish; sets status.
start() {
  local mode=$2
  name=$1 dir="$SCRATCH/$1"; shift 2
  mkdir -p "$dir"
  "$XS" run -o "$dir" "$@" -- "$T/tw_idle" "$mode" "$dir.stop" >"$dir.stdout" 2>"$dir.stderr" </dev/null &
  pid=$! file="$dir/exitscope-$pid.jsonl"
  wait_for "$dir.stdout" '^ready' || fail "$name: the program started" "$(cat "$dir.stderr")"
}
# reap PID: wait for it (at most 20 s, then SIGKILL); sets status.
reap() {
  local i
  for ((i = 0; i < 1000; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.02; done
  if kill -0 "$1" 2>/dev/null; then fail "$name: finished within 20 s (killed)"; kill -KILL "$1"; fi
  wait "$1" 2>/dev/null; status=$?
}
stop() { touch "$dir.stop"; reap "$pid"; }

# The program blocks every signal; kill -USR1 still closes windows.
start sig-blocked block
kill -USR1 "$pid"
check "$name: kill -USR1 closes a window" wait_records "$file" '.reason == "signal"' 1
kill -USR1 "$pid"
check "$name: a second kill -USR1 closes another" wait_records "$file" '.reason == "signal"' 2
stop
expect_val "$name: exit status" 0 "$status"
expect_val "$name: reasons" '["signal","signal","exit"]' "$(recs "$file" '[.[].reason]')"
expect_val "$name: labels are null" '[null,null,null]' "$(recs "$file" '[.[].label]')"
check_sums "$name: windows add up to the total" "$file"
expect_val "$name: total getppid == what the program counted" "$(sed -n 's/^getppid=//p' "$dir.stdout")" \
  "$(recs "$file" '.[-1].total.syscalls.getppid.calls')"

# kill -USR1 -PGID: the parent and its fork child each close a window. The
# parent is the run's first process, so its signal also closes a run-wide
# window (DESIGN.md §3.11), which reaches the child as a window by command:
# the child has its signal's window and that one, in either order.
name=sig-group dir="$SCRATCH/$name"
mkdir -p "$dir"
setsid "$XS" run -o "$dir" -- "$T/tw_idle" fork "$dir.stop" >"$dir.stdout" 2>"$dir.stderr" </dev/null &
spid=$!
wait_for "$dir.stdout" '^child .* ready' && wait_for "$dir.stdout" '^ready'
ppid_=$(sed -n 's/^ready //p' "$dir.stdout") cpid=$(sed -n 's/^child \([0-9]*\) ready/\1/p' "$dir.stdout")
pgid=$(ps -o pgid= -p "$ppid_" | tr -d ' ')
if [ -n "$pgid" ] && [ "$pgid" != "$(ps -o pgid= -p $$ | tr -d ' ')" ]; then
  kill -USR1 -- "-$pgid"
  check "$name: parent closed a window" wait_records "$dir/exitscope-$ppid_.jsonl" '.reason == "signal"' 1
  check "$name: fork child closed a window" wait_records "$dir/exitscope-$cpid.jsonl" '.reason == "signal"' 1
else
  fail "$name: the program runs in its own process group" "pgid '$pgid'"
fi
touch "$dir.stop"; reap "$spid"
expect_val "$name: exit status" 0 "$status"
expect_val "$name: the parent's reasons" '["signal","exit"]' "$(recs "$dir/exitscope-$ppid_.jsonl" '[.[].reason]')"
expect_val "$name: the child's reasons (its signal's window and the run-wide one, in either order)" \
  '["command","exit","signal"]' "$(recs "$dir/exitscope-$cpid.jsonl" '[.[].reason] | sort')"
for p in "$ppid_" "$cpid"; do
  check_sums "$name: $p windows add up to the total" "$dir/exitscope-$p.jsonl"
done

# --signal USR2: USR2 closes windows; USR1 is the program's (blocked here).
start sig-usr2 block --signal USR2
kill -USR2 "$pid"
check "$name: kill -USR2 closes a window" wait_records "$file" '.reason == "signal"' 1
kill -USR1 "$pid"; sleep 0.3
stop
expect_val "$name: exit status (USR1 stays blocked and pending)" 0 "$status"
expect_val "$name: reasons" '["signal","exit"]' "$(recs "$file" '[.[].reason]')"

# --signal none: SIGUSR1 keeps its default action, as natively.
"$T/tw_idle" plain "$SCRATCH/native.stop" >"$SCRATCH/native.stdout" 2>&1 &
npid=$!
wait_for "$SCRATCH/native.stdout" '^ready'
kill -USR1 "$npid"; wait "$npid" 2>/dev/null; native=$?
start sig-none plain --signal none
kill -USR1 "$pid"; reap "$pid"
expect_val "$name: dies of SIGUSR1 with the native status" "$native" "$status"
expect_val "$name: native status is 128+SIGUSR1" 138 "$native"
expect_val "$name: one record, reason exit" '["exit"]' "$(recs "$file" '[.[].reason]')"

# The program's own SIGUSR1 handler wins.
start sig-program-wins handler
for _ in 1 2 3; do kill -USR1 "$pid"; sleep 0.3; done
stop
expect_val "$name: exit status" 0 "$status"
expect_val "$name: the program's handler got every signal" "got=3" "$(grep '^got=' "$dir.stdout")"
expect_val "$name: no window closed by the signal" '["exit"]' "$(recs "$file" '[.[].reason]')"
expect_val "$name: the log says so once" 1 "$(grep -c 'SIGUSR1 itself' "$dir.stderr")"
expect_val "$name: async_signals counts the deliveries" 3 "$(recs "$file" '.[-1].total.async_signals')"

# ---------------------------------------------------------------------------
# exitscope dump / reset through the control socket.
for mode in block ignore; do
  start "cmd-$mode" "$mode"
  "$XS" dump "$pid" warm >"$dir.dump" 2>"$dir.dump.err"
  expect_val "$name: dump exit status" 0 "$?"
  check "$name: dump prints the window's block" \
    grep -q "^----- exitscope stats for process $pid (window #0, .*label \"warm\"" "$dir.dump"
  expect_val "$name: the record is written when dump returns" '[["command","warm"]]' \
    "$(recs "$file" '[.[] | [.reason, .label]]')"
  "$XS" reset "$pid" >"$dir.reset" 2>&1
  expect_val "$name: reset exit status" 0 "$?"
  expect_eq "$name: reset prints nothing" "" "$(cat "$dir.reset")"
  expect_val "$name: reset writes a record" '[["command","warm"],["command",null]]' \
    "$(recs "$file" '[.[] | [.reason, .label]]')"
  [ "$mode" = block ] || { stop; check_sums "$name: windows add up to the total" "$file"; continue; }

  # an unknown command: an error reply, nothing changes
  reply=$(python3 - "$pid" <<'EOF'
import re, socket, sys
# the runtime's name is "@exitscope-PID-<16 random hex digits>"
pat = re.compile(r"^@exitscope-%s-[0-9a-f]{16}$" % sys.argv[1])
name = [l.split()[-1] for l in open("/proc/net/unix") if pat.match(l.split()[-1])][0]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("\0" + name[1:])
s.sendall(b"frobnicate now\n")
s.shutdown(socket.SHUT_WR)
data = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    data += d
sys.stdout.write(data.decode(errors="replace"))
EOF
)
  check "$name: unknown command gets an error reply" grep -q '^error: ' <<<"$reply"
  sleep 0.2
  expect_val "$name: unknown command writes no record" 2 "$(recs "$file" length)"

  # another user is refused
  if setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$XS_NOBODY"; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$XS_NOBODY" dump "$pid" intruder >"$dir.nobody" 2>&1
    st=$?
    check "$name: a peer of another user is refused (status $st)" test "$st" -ne 0
    if grep -q 'permission denied' "$dir.nobody"; then ok "$name: ... with 'permission denied'"
    else fail "$name: ... with 'permission denied'" "status $st, output: '$(head -c 300 "$dir.nobody")'"; fi
    sleep 0.2
    expect_val "$name: ... and no record" 2 "$(recs "$file" length)"
  else
    fail "$name: nobody can run $XS_NOBODY (needed for the other-user check)"
  fi

  "$XS" dump "$pid" after >/dev/null 2>&1
  expect_val "$name: the next dump is window #2" '[2,"after"]' "$(recs "$file" '.[-1] | [.seq, .label]')"
  stop
  expect_val "$name: exit status" 0 "$status"
  check_sums "$name: windows add up to the total" "$file"
done

# dump of a process without exitscope
sleep 30 &
spid=$!
"$XS" dump "$spid" x >"$SCRATCH/nort.out" 2>&1
st=$?
kill "$spid"; wait "$spid" 2>/dev/null
check "dump-no-runtime: non-zero status (got $st)" test "$st" -ne 0
check "dump-no-runtime: the message says no exitscope runtime answers" \
  grep -q "process $spid: no exitscope runtime" "$SCRATCH/nort.out"

# ---------------------------------------------------------------------------
# A dump that meets the end of its process: stopped (its service thread
# too), it cannot answer; killed, its descriptors close. The command says
# the process ended rather than that the runtime hung up.
name=dump-ended dir="$SCRATCH/$name"
mkdir -p "$dir"
"$XS" run -o "$dir" -- "$T/tw_idle" plain "$dir.stop" >"$dir.stdout" 2>"$dir.stderr" </dev/null &
pid=$!
if wait_for "$dir.stdout" '^ready'; then
  kill -STOP "$pid"
  timeout 20 "$XS" dump "$pid" late >"$dir.dump" 2>"$dir.dump.err" &
  dpid=$!
  sleep 0.5
  kill -KILL "$pid"
  wait "$dpid"; st=$?
  wait "$pid" 2>/dev/null
  check "$name: non-zero status (got $st)" test "$st" -ne 0 -a "$st" -ne 124
  check "$name: the message says the process ended before it answered" \
    grep -q "process $pid ended before it answered: the window that was open closes with its exit record" "$dir.dump.err"
else
  fail "$name: the program started" "$(head -c 500 "$dir.stderr")"
fi

# ---------------------------------------------------------------------------
# --interval 100 on a 1-second program
name=interval dir="$SCRATCH/$name"
mkdir -p "$dir"
timeout -k 5 60 "$XS" run -o "$dir" --interval 100 -- "$T/tw_idle" timed:1000 x >"$dir.stdout" 2>"$dir.stderr" </dev/null
expect_val "$name: exit status" 0 "$?"
file=$(find "$dir" -name 'exitscope-*.jsonl' | head -n 1)
n=$(recs "$file" '[.[] | select(.reason == "interval")] | length')
check "$name: about 10 interval windows (5..15; got ${n:-none})" test "${n:-0}" -ge 5 -a "${n:-0}" -le 15
check_sums "$name: windows add up to the total" "$file"
check_sums "$name: faults and preemptions of the windows add up to the total" "$file" kernel
expect_val "$name: total getppid == what the program counted" "$(sed -n 's/^getppid=//p' "$dir.stdout")" \
  "$(recs "$file" '.[-1].total.syscalls.getppid.calls')"

# ---------------------------------------------------------------------------
# /dev/exitscope
name=devfile dir="$SCRATCH/$name"
mkdir -p "$dir"
timeout -k 5 60 "$XS" run -o "$dir" --format none -- "$T/tw_devfile" "$dir.json" >"$dir.stdout" 2>"$dir.stderr" </dev/null
expect_val "$name: exit status" 0 "$?"
file=$(find "$dir" -name 'exitscope-*.jsonl' | head -n 1)
expect_val "$name: exitscope_dump/reset return 0" "dump=0 reset=0" "$(grep '^dump=' "$dir.stdout")"
expect_val "$name: malformed writes fail with EINVAL" "$(printf 'malformed=-1/EINVAL\n%.0s' 1 2 3)" \
  "$(grep '^malformed=' "$dir.stdout")"
expect_val "$name: malformed writes close no window (even 'dump a\\nbogus\\n')" \
  '[["app","one"],["app",null],["exit",null]]' "$(recs "$file" '[.[] | [.reason, .label]]')"
check "$name: read gives one valid JSON object" jq -e 'type == "object"' "$dir.json"
expect_val "$name: read: live getppid calls (window and total)" "25 25" \
  "$(jq -r '"\(.window.syscalls.getppid.calls) \(.total.syscalls.getppid.calls)"' "$dir.json" 2>/dev/null)"
expect_val "$name: read: counters present" true \
  "$(jq '[.window, .total] | all(has("exits") and has("enters") and has("async_signals") and has("preemptions"))' "$dir.json" 2>/dev/null)"
expect_val "$name: the file's own traffic is not counted" 0 \
  "$(recs "$file" '[.[].window.syscalls | (.read.calls // 0)] | add')"
check_sums "$name: windows add up to the total" "$file"
"$T/tw_devfile" "$SCRATCH/native.json" >"$SCRATCH/native.out" 2>&1
expect_val "devfile-native: without exitscope the marks return -1 and the file is absent" \
  "dump=-1 reset=-1|read=-1" "$(grep -E '^(dump|read)=' "$SCRATCH/native.out" | paste -sd'|')"

# ---------------------------------------------------------------------------
# Output formats
name=format-gramine dir="$SCRATCH/$name"
mkdir -p "$dir"
"$XS" run -o "$dir" --format gramine -- "$T/tw_idle" timed:100 x >/dev/null 2>"$dir.stderr" </dev/null
file=$(find "$dir" -name 'exitscope-*.jsonl' | head -n 1)
expect_val "$name: # of EENTERs == the record's enters" "$(recs "$file" '.[-1].total.enters')" \
  "$(sed -n 's/^  # of EENTERs: *//p' "$dir.stderr")"
expect_val "$name: # of EEXITs == the record's exits" "$(recs "$file" '.[-1].total.exits')" \
  "$(sed -n 's/^  # of EEXITs: *//p' "$dir.stderr")"
check "$name: AEXs and signal lines" grep -q '^  # of AEXs:' "$dir.stderr"
check "$name: sync/async signal lines" grep -qE '^  # of (sync|async) signals:' "$dir.stderr"
name=format-none dir="$SCRATCH/$name"
mkdir -p "$dir"
"$XS" run -o "$dir" --format none -- "$T/tw_idle" timed:100 x >/dev/null 2>"$dir.stderr" </dev/null
expect_eq "$name: nothing on stderr" "" "$(cat "$dir.stderr")"
expect_val "$name: the record is still written" '["exit"]' \
  "$(recs "$(find "$dir" -name 'exitscope-*.jsonl' | head -n 1)" '[.[].reason]')"
name=log-file dir="$SCRATCH/$name"
mkdir -p "$dir"
"$XS" run -o "$dir" --log "$dir.log" -- "$T/tw_idle" timed:100 x >/dev/null 2>"$dir.stderr" </dev/null
expect_eq "$name: nothing on stderr" "" "$(cat "$dir.stderr")"
check "$name: the block is in the log file" grep -q '^----- exitscope stats for process' "$dir.log"

# ---------------------------------------------------------------------------
# Bad input: refused with 124 before the program runs.
refused() { # NAME EXPECT_STATUS MARKER CMD...
  local n=$1 want=$2 marker=$3; shift 3
  "$@" >"$SCRATCH/refused.out" 2>&1
  local st=$?
  expect_val "$n: status" "$want" "$st"
  check "$n: the program did not run" test ! -e "$marker"
  check "$n: a message on stderr" test -s "$SCRATCH/refused.out"
}
refused "bad-outdir-missing" 124 "$SCRATCH/ran1" \
  "$XS" run -o "$SCRATCH/no/such/dir" -- "$T/tw_idle" touch "$SCRATCH/ran1"
: >"$SCRATCH/a-file"
refused "bad-outdir-not-a-dir" 124 "$SCRATCH/ran2" \
  "$XS" run -o "$SCRATCH/a-file" -- "$T/tw_idle" touch "$SCRATCH/ran2"
refused "bad-log-dir-missing" 124 "$SCRATCH/ran3" \
  "$XS" run -o "$SCRATCH" --log "$SCRATCH/no/such/log" -- "$T/tw_idle" touch "$SCRATCH/ran3"
# unwritable: run as nobody, -o a directory of root's (mode 755)
mkdir -m 755 "$shared/ro"; mkdir -m 777 "$shared/rw"
if setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$XS_NOBODY" -a -x "$T_NOBODY/tw_idle"; then
  refused "bad-outdir-unwritable" 124 "$shared/rw/ran" \
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$XS_NOBODY" run -o "$shared/ro" -- "$T_NOBODY/tw_idle" touch "$shared/rw/ran"
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$XS_NOBODY" run -o "$shared/rw" -- "$T_NOBODY/tw_idle" touch "$shared/rw/ran" \
    >/dev/null 2>&1
  expect_val "bad-outdir-unwritable: control: a writable dir works for nobody" 0 "$?"
else
  fail "bad-outdir-unwritable: nobody can run $XS_NOBODY and $T_NOBODY/tw_idle"
fi
