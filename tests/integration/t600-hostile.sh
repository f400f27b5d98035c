#!/usr/bin/env bash
# t600: a hostile local user and hostile programs (issue 10: record and
# profile files, credentials, small signal stacks, seccomp, dispatch).
#  - files: a symlink, another user's file, a FIFO or a hard link planted as
#    exitscope-PID.jsonl or exitscope-PID-N.data in a shared directory never
#    gets written or truncated; the records wait in memory until the path is
#    safe; --log refuses a symlink and another user's file;
#  - a handler on an 8 KiB alternate stack closes windows and exits;
#  - a root server whose forked workers drop root under load: no runtime
#    thread keeps uid 0, groups or capabilities, every file ends with exit;
#  - a program that uses Syscall User Dispatch itself, and switches it off;
#  - seccomp's strict mode: the process ends as natively (status, output).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0
HOSTILE=xs-hostile-m
id "$HOSTILE" >/dev/null 2>&1 || useradd -M -r -s /usr/sbin/nologin "$HOSTILE"
shared=$(mktemp -d "${TMPDIR:-/tmp}/xs-t600.XXXXXX")
trap 'rm -rf "$SCRATCH" "$shared"' EXIT
chmod 1777 "$shared"

# run_planted SETUP ARGS: run exitscope from a subshell that first runs
# SETUP with $pid set to its own pid (which the program will have: exitscope
# execs it), as an attacker would guess it.
run_planted() {
  local setup=$1; shift
  victim=$victim shared=$shared SCRATCH=$SCRATCH XS=$XS timeout -s KILL 30 \
    bash -c 'pid=$$; eval "$0"; exec "$XS" run "$@"' "$setup" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err"
}

# --- records and profiles in a shared directory ---
victim=$SCRATCH/victim
export HOSTILE
printf 'secret\n' >"$victim"; chmod 600 "$victim"
before=$(sha256sum <"$victim")

run_planted 'ln -s "$victim" "$shared/exitscope-$pid.jsonl"; echo "$pid" >"$SCRATCH/pid"' \
  -o "$shared" -- "$T/tt_count_getppid" 10
st=$?; pid=$(cat "$SCRATCH/pid")
expect_eq "planted record symlink: the program runs as natively (status 0)" 0 "$st"
expect_eq "planted record symlink: its target is unchanged" "$before" "$(sha256sum <"$victim")"
check "planted record symlink: one line on the log names the file and the reason" \
  grep -q "not writing '$shared/exitscope-$pid.jsonl': it is a symbolic link" "$SCRATCH/err"
expect_eq "planted record symlink: said once" 1 "$(grep -c 'not writing' "$SCRATCH/err")"
rm -f "$shared/exitscope-$pid.jsonl"

run_planted 'ln -s "$victim" "$shared/exitscope-$pid-0.data"; echo "$pid" >"$SCRATCH/pid"' \
  -o "$shared" -p -- "$T/tt_count_getppid" 10
st=$?; pid=$(cat "$SCRATCH/pid")
expect_eq "planted profile symlink: status 0" 0 "$st"
expect_eq "planted profile symlink: its target is not truncated" "$before" "$(sha256sum <"$victim")"
check "planted profile symlink: the log says why profiling stopped" \
  grep -q "not writing '$shared/exitscope-$pid-0.data': it exists already" "$SCRATCH/err"
check "planted profile symlink: the stats are still written" \
  jq -e 'select(.reason == "exit") | .profile == null' "$shared/exitscope-$pid.jsonl"
rm -f "$shared"/exitscope-"$pid"*

# another user's regular file, a FIFO and a hard link
run_planted 'touch "$shared/exitscope-$pid.jsonl"; chown "$HOSTILE" "$shared/exitscope-$pid.jsonl"; echo "$pid" >"$SCRATCH/pid"' \
  -o "$shared" -- "$T/tt_count_getppid" 10
pid=$(cat "$SCRATCH/pid")
expect_eq "another user's planted record file: left empty" 0 "$(stat -c %s "$shared/exitscope-$pid.jsonl")"
check "another user's planted record file: the log says so" grep -q "belongs to another user" "$SCRATCH/err"
rm -f "$shared/exitscope-$pid.jsonl"

run_planted 'mkfifo "$shared/exitscope-$pid.jsonl"; echo "$pid" >"$SCRATCH/pid"' \
  -o "$shared" -- "$T/tt_count_getppid" 10
st=$?; pid=$(cat "$SCRATCH/pid")
expect_eq "planted FIFO: the program does not hang (status 0)" 0 "$st"
check "planted FIFO: the log says so" grep -q "not a regular file" "$SCRATCH/err"
rm -f "$shared/exitscope-$pid.jsonl"

cp "$victim" "$shared/own-file"
run_planted 'ln "$shared/own-file" "$shared/exitscope-$pid.jsonl"; echo "$pid" >"$SCRATCH/pid"' \
  -o "$shared" -- "$T/tt_count_getppid" 10
pid=$(cat "$SCRATCH/pid")
expect_eq "planted hard link: its target is unchanged" "$before" "$(sha256sum <"$shared/own-file")"
rm -f "$shared/exitscope-$pid.jsonl" "$shared/own-file"

# The records wait in memory: once the planted link is gone, the next
# window's record carries the earlier ones too.
( pid=$BASHPID; ln -s "$victim" "$shared/exitscope-$pid.jsonl"; echo "$pid" >"$SCRATCH/pid"
  exec "$XS" run -o "$shared" -- "$T/tw_idle" plain "$SCRATCH/stop" ) >"$SCRATCH/out" 2>"$SCRATCH/err" &
bg=$!
wait_for "$SCRATCH/out" ready 10
pid=$(cat "$SCRATCH/pid")
"$XS" dump "$pid" first >/dev/null 2>&1
rm -f "$shared/exitscope-$pid.jsonl"
"$XS" dump "$pid" second >/dev/null 2>&1
touch "$SCRATCH/stop"; wait "$bg" 2>/dev/null
expect_eq "records refused while a link was planted are written once it is gone" \
  "first second null" "$(jq -r .label "$shared/exitscope-$pid.jsonl" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
expect_eq "planted link: target still unchanged after the windows" "$before" "$(sha256sum <"$victim")"

# --log (run in an empty directory: a refusal leaves no run directory)
ln -s "$victim" "$shared/log-link"
mkdir -p "$SCRATCH/logcwd"
(cd "$SCRATCH/logcwd" && "$XS" run --log "$shared/log-link" -- true 2>"$SCRATCH/err")
expect_eq "--log on a symlink: refused with status 124" 124 $?
expect_eq "--log refused: no run directory left behind" "" "$(ls -A "$SCRATCH/logcwd")"
check "--log on a symlink: says why" grep -q "cannot open log '$shared/log-link': it is a symbolic link" "$SCRATCH/err"
touch "$shared/log-other"; chown "$HOSTILE" "$shared/log-other"
(cd "$SCRATCH/logcwd" && "$XS" run --log "$shared/log-other" -- true 2>"$SCRATCH/err")
expect_eq "--log on another user's file: refused with status 124" 124 $?
expect_eq "--log on another user's file: left empty" 0 "$(stat -c %s "$shared/log-other")"
expect_eq "planted log targets unchanged" "$before" "$(sha256sum <"$victim")"

# --- a small alternate signal stack ---
for mode in dump exit; do
  "$T/th_small_altstack" "$mode" >"$SCRATCH/native" 2>&1; nst=$?
  (cd "$SCRATCH" && timeout -s KILL 20 "$XS" run -o . --format none -- "$T/th_small_altstack" "$mode") >"$SCRATCH/xs" 2>&1
  xst=$?
  expect_eq "8 KiB alternate stack ($mode): status as natively ($nst)" "$nst" "$xst"
  expect_eq "8 KiB alternate stack ($mode): output as natively" "$(cat "$SCRATCH/native")" "$(cat "$SCRATCH/xs")"
done

# --- a root server whose forked workers drop root, under load ---
out=$SCRATCH/priv; mkdir -p "$out"; chmod 755 "$out"
nob_uid=$(id -u nobody); nob_gid=$(id -g nobody)
"$T/th_priv_server" "$nob_uid" "$nob_gid" 4 20000 | sort >"$SCRATCH/native"
(cd "$out" && timeout -s KILL 120 "$XS" run -o . --format none -- "$T/th_priv_server" "$nob_uid" "$nob_gid" 4 20000) \
  2>"$SCRATCH/err" | sort >"$SCRATCH/xs"
expect_eq "privilege drop: every worker finds no task that kept uid 0, groups or capabilities (as natively)" \
  "$(cat "$SCRATCH/native")" "$(cat "$SCRATCH/xs")"
expect_eq "privilege drop: one record file per process (server and 4 workers)" 5 "$(find "$out" -name 'exitscope-*.jsonl' | wc -l)"
bad=""
for f in "$out"/exitscope-*.jsonl; do
  [ "$(tail -n 1 "$f" | jq -r .reason)" = exit ] || bad="$bad $(basename "$f"):no-exit-record"
done
expect_eq "privilege drop: every process's file ends with its exit record" "" "$bad"
expect_eq "privilege drop: each worker's windows before and after the drop are in one file" \
  "4" "$(cat "$out"/exitscope-*.jsonl | jq -sr '[group_by(.pid)[] | map(.label // .reason) | select(. == ["before-drop","after-drop","exit"])] | length')"
expect_eq "privilege drop: nothing on the log" "" "$(cat "$SCRATCH/err")"

# --- a program that uses Syscall User Dispatch itself ---
"$T/th_sud_self" >"$SCRATCH/native" 2>&1; nst=$?
d=$SCRATCH/sud; mkdir -p "$d"
(cd "$d" && timeout -s KILL 20 "$XS" run -o . --format none -- "$T/th_sud_self") >"$SCRATCH/xs" 2>"$SCRATCH/err"
xst=$?
expect_eq "own dispatch: status as natively ($nst)" "$nst" "$xst"
expect_eq "own dispatch: its handler emulates, its allowed calls run, as natively" "$(cat "$SCRATCH/native")" "$(cat "$SCRATCH/xs")"
expect_eq "own dispatch: after it switches dispatch off, /dev/exitscope still closes a window, and the exit is recorded" \
  "after-dispatch-off exit" "$(jq -r '.label // .reason' "$d"/exitscope-*.jsonl 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
expect_eq "own dispatch: its handled call is a signal, not a system call" "1 2" \
  "$(head -n 1 "$d"/exitscope-*.jsonl | jq -r '"\(.window.sync_signals) \(.window.syscalls.getppid.calls)"')"
check "own dispatch: said once on the log" grep -q "uses Syscall User Dispatch itself" "$SCRATCH/err"

# --- seccomp's strict mode: the process ends as natively ---
for mode in kill exit thread; do
  "$T/th_seccomp_strict" "$mode" >"$SCRATCH/native" 2>/dev/null; nst=$?
  d=$SCRATCH/strict-$mode; mkdir -p "$d"
  start=$(date +%s)
  (cd "$d" && exec timeout -s KILL 20 "$XS" run -o . --format none -- "$T/th_seccomp_strict" "$mode") >"$SCRATCH/xs" 2>/dev/null
  xst=$?; took=$(($(date +%s) - start))
  expect_eq "strict seccomp ($mode): the process ends by itself, with the native status $nst" "$nst within 10 s" \
    "$xst within $([ "$took" -lt 10 ] && echo 10 || echo "$took") s"
  expect_eq "strict seccomp ($mode): output as natively" "$(cat "$SCRATCH/native")" "$(cat "$SCRATCH/xs")"
  expect_eq "strict seccomp ($mode): the process's file ends with its exit record" exit \
    "$(tail -n 1 "$d"/exitscope-*.jsonl 2>/dev/null | jq -r .reason)"
done
expect_eq "strict seccomp (kill): the killing call is an exit without an enter, the thread is listed as exited" \
  "1 true" "$(tail -n 1 "$SCRATCH"/strict-kill/exitscope-*.jsonl | jq -r '"\(.total.exits - .total.enters - (.total.syscalls.exit_group.calls // 0)) \(.threads[0].exited)"')"
