#!/usr/bin/env bash
# t900: one run, one view. The run directory and its run file, run-wide
# windows closed by command and from inside a child, their exactness (the
# windows sum to the totals, the processes to the tree, and the tree's
# getppid calls equal strace -f -c's), and report RUN naming each program.
. "$(dirname "$0")/../lib.sh"
cd "$SCRATCH" || exit 1
# same NAME A B: A = B, and neither is empty or null (a missing file or
# field must not pass as two equal nothings)
same() {
  if [ -z "$2" ] || [ "$2" = null ]; then fail "$1" "nothing to compare (a missing file or field)" "actual: $3"
  else expect_eq "$@"; fi
}

# --- the run directory: created new, never an existing name ---
bash -c 'exec "$0" run --format none -- /bin/true' "$XS"
dirs=$(ls -d exitscope-* 2>/dev/null | wc -l)
check "run: a new run directory ./exitscope-PID/ with run.jsonl" test "$dirs" = 1 -a -f "$(ls -d exitscope-*)/run.jsonl"
rm -rf exitscope-*
bash -c 'ln -s /tmp "exitscope-$$"; exec "$0" run --format none -- /bin/true' "$XS" 2>err
st=$?
expect_eq "run: a planted symlink as the run directory is refused (124)" 124 "$st"
check "run: the refusal names the run directory" grep -q "^exitscope: run directory 'exitscope-[0-9]*': it exists already" err
rm -f exitscope-*

# --- a forking tree: a run-wide window from inside a child ---
"$XS" run --format none -- "$T/tw_runtree" 4 1000 >out 2>err
st=$?
d=$(ls -d exitscope-*)
expect_eq "runtree: exit status and child 0's /dev/exitscope write" "0 devfile=16" "$st $(cat out)"
check "runtree: the run file names 6 processes" test "$(grep -c '"event": "start"' "$d/run.jsonl")" = 6
check "runtree: one window line, from inside a child (reason app, label inside)" \
  test "$(grep '"event": "window"' "$d/run.jsonl" | jq -r '"\(.run_window) \(.reason) \(.label) \(.closed | length)"')" = "1 app inside 5"
"$XS" report --json "$d" >rep.json
expect_eq "runtree: getppid per run-wide window (4 children x 1000 before; after: 4 x 1000 + the late child's 1000)" \
  "1:4000 null:5000" "$(jq -r '[.windows[] | "\(.run_window):\(.totals.syscalls.getppid.calls)"] | join(" ")' rep.json)"
same "runtree: the windows sum to the run's total, every counter" \
  "$(jq -c '.total.totals | .syscalls |= (to_entries | sort_by(.key) | from_entries)' rep.json)" \
  "$(jq -c '[.windows[].totals] | reduce .[] as $w ({}; . as $a | $w | to_entries | map(if .key == "syscalls" then {key, value: (($a.syscalls // {}) as $s | .value | with_entries(.value as $v | .value = {calls: ($v.calls + ($s[.key].calls // 0)), errors: ($v.errors + ($s[.key].errors // 0)), ns: ($v.ns + ($s[.key].ns // 0))}) + ($s | with_entries(select(.key as $k | $w.syscalls | has($k) | not))))} else {key, value: (.value + ($a[.key] // 0))} end) | from_entries)' rep.json | jq -c '.syscalls |= (to_entries | sort_by(.key) | from_entries)')" \
  2>/dev/null
# each process: its records' windows sum to its last total
bad=0
for f in "$d"/exitscope-*.jsonl; do
  a=$(jq -s -c '[.[].window.exits] | add' "$f"); b=$(tail -n 1 "$f" | jq -c '.total.exits')
  [ "$a" = "$b" ] || { bad=1; echo "    $f: windows $a, total $b"; }
done
expect_eq "runtree: each process's windows sum to its total" 0 "$bad"
same "runtree: the processes sum to the tree (exits)" \
  "$(jq '.total.totals.exits' rep.json)" "$(jq '[.processes[].exits] | add' rep.json)"
expect_eq "runtree: the late child (born after window 1) is only in the rest" \
  "1" "$(jq '[.windows[] | select(.run_window == 1) | .processes[]] | length as $n | 6 - $n' rep.json)"
if command -v strace >/dev/null; then
  strace -f -c -o strace.out "$T/tw_runtree" 4 1000 >/dev/null
  s=$(awk '$NF == "getppid" { print $(NF-1) }' strace.out)
  same "runtree: the tree's getppid calls equal strace -f -c's" "$s" "$(jq '.total.totals.syscalls.getppid.calls' rep.json)"
else
  fail "runtree: strace is not installed"
fi
rm -rf exitscope-*

# --- a run-wide window by command across a shell tree ---
"$XS" run --format none -- sh -c 'for i in 1 2 3; do (while [ ! -e stop ]; do sleep 0.05; done) & done; wait' &
pid=$!
for _ in $(seq 100); do [ "$(grep -c '"event": "start"' "exitscope-$pid/run.jsonl" 2>/dev/null)" -ge 4 ] && break; sleep 0.05; done
"$XS" dump "exitscope-$pid" warm >dump.out 2>dump.err
st=$?
touch stop; wait "$pid"
if [ "$st" = 0 ] && [ "$(tail -n 1 dump.out | cut -d: -f1)" = "ok run window 1" ]; then ok "dump RUN: status 0 and 'ok run window 1'"
else fail "dump RUN: status 0 and 'ok run window 1'" "status $st" "$(tail -n 3 dump.out)" "$(head -c 600 dump.err)"; fi
n=$(grep -c '^process [0-9]*: window #' dump.out)
check "dump RUN: at least the shell and its 3 subshells closed a window" test "$n" -ge 4
bad=0
for p in $(grep -o '^process [0-9]*: window' dump.out | awk '{print $2}' | tr -d :); do
  grep -q '"run_window": 1}' "exitscope-$pid/exitscope-$p.jsonl" || bad=$((bad + 1))
done
[ "$n" -gt 0 ] || bad=none
expect_eq "dump RUN: every process it names has a record with run_window 1" 0 "$bad"
check "dump RUN: the window line has the label" grep -q '"run_window": 1, "label": "warm"' "exitscope-$pid/run.jsonl"
"$XS" report "exitscope-$pid" >rep.txt
check "report RUN: the run window's heading" grep -q '^run window 1 (command, label "warm")' rep.txt
rm -rf exitscope-* stop

# --- a run-wide window by the control signal sent to the run's first process ---
"$XS" run --log sig.log -- sh -c 'for i in 1 2 3; do (while [ ! -e stop ]; do sleep 0.05; done) & done; wait' &
pid=$!
for _ in $(seq 100); do [ "$(grep -c '"event": "start"' "exitscope-$pid/run.jsonl" 2>/dev/null)" -ge 4 ] && break; sleep 0.05; done
kill -USR1 "$pid"
wait_for "exitscope-$pid/run.jsonl" '"event": "window"' 10
touch stop; wait "$pid"
check "signal: the run file's window line (run window 1, reason signal, by the first process)" \
  grep -q "\"run_window\": 1, \"label\": null, \"reset\": false, \"reason\": \"signal\", \"by\": $pid," "exitscope-$pid/run.jsonl"
n=$(grep '"event": "window"' "exitscope-$pid/run.jsonl" | jq '.closed | length')
check "signal: it closed the first process and its 3 subshells at least ($n)" test "${n:-0}" -ge 4
bad=0
for p in $(grep '"event": "window"' "exitscope-$pid/run.jsonl" | jq '.closed[].pid'); do
  grep -q '"run_window": 1}' "exitscope-$pid/exitscope-$p.jsonl" || bad=$((bad + 1))
done
[ "${n:-0}" -gt 0 ] || bad=none
expect_eq "signal: every process it names has a record with run_window 1" 0 "$bad"
check "signal: the first process's block on the log, as a signal's always was" \
  grep -q "^----- exitscope stats for process $pid (window #0, SIGUSR1, .*): \"sh\" -----" sig.log
"$XS" report --json "exitscope-$pid" >rep.json
same "signal: the run-wide windows sum to the run's total (exits)" \
  "$(jq '.total.totals.exits' rep.json)" "$(jq '[.windows[].totals.exits] | add' rep.json)"
rm -rf exitscope-* stop sig.log

# --- a pipeline: one report naming each program ---
"$XS" run --format none -- sh -c 'printf "b\na\n" | sort | cat | wc -l' >out
d=$(ls -d exitscope-*)
"$XS" report "$d" >rep.txt
for prog in dash sort cat wc; do
  check "pipeline: report RUN names $prog" grep -q "^  $prog  *x " rep.txt
done
expect_eq "pipeline: the program's own output" 2 "$(cat out)"

# --- the log at exit: one summary for the run, naming each program ---
rm -rf exitscope-*
"$XS" run --log log.txt -- sh -c 'printf "b\na\n" | sort | wc -l' >out
d=$(ls -d exitscope-*)
"$XS" report --json "$d" >rep.json
check "log: one run summary, naming the first process's program" \
  test "$(grep -c '^----- exitscope run summary: dash (pid [0-9]*) and its tree, 4 processes' log.txt)" = 1
expect_eq "log: no per-process block without --log-each" 0 "$(grep -c '^----- exitscope stats for process' log.txt)"
same "log: the summary's exits are the tree's (report --json)" \
  "$(jq '.total.totals.exits' rep.json)" "$(sed -n 's/^  exits \([0-9]*\), enters.*/\1/p' log.txt)"
check "log: the summary's programs (sort, wc, dash x 2)" \
  grep -q '^  programs: .*sort x 1 .*wc x 1 .*dash x 2' log.txt
same "log: the summary's total calls row is the tree's exits" \
  "$(jq '.total.totals.exits' rep.json)" "$(awk '$NF == "total" && $1 ~ /^[0-9.]+$/ { print $4 }' log.txt)"
check "log: the summary says where the files are" grep -q "^  files: $PWD/$d/ " log.txt
rm -rf exitscope-* log.txt
"$XS" run --log-each --log log.txt -- sh -c 'printf "b\na\n" | sort | wc -l' >out
n=$(grep -c '^----- exitscope stats for process [0-9]* (window #[0-9]*, exit, [0-9.]* s): "[a-z]*" -----$' log.txt)
expect_eq "--log-each: an exit block per process (4), each naming its program" 4 "$n"
check "--log-each: sort's and wc's exit blocks name them" \
  sh -c 'grep -q "exit, .*): \"sort\" -----" log.txt && grep -q "exit, .*): \"wc\" -----" log.txt'
check "--log-each: and the run summary after them" sh -c 'tail -n 30 log.txt | grep -q "^----- exitscope run summary"'
rm -rf exitscope-* log.txt
"$XS" run --log log.txt -- /bin/true
check "log: a run of one process shows its own block as before (no summary)" \
  sh -c 'grep -q "^----- exitscope stats for process [0-9]* (window #0, exit, .*): \"true\" -----" log.txt && ! grep -q "run summary" log.txt'
rm -rf exitscope-* log.txt

mkdir od
"$XS" run -o od --log log.txt -- sh -c 'printf "b\na\n" | sort | wc -l' >out
check "log with -o DIR: the run's summary, naming the run file to report" \
  sh -c "grep -q '^----- exitscope run summary: dash' log.txt && grep -q '^  files: $PWD/od/ .*exitscope report $PWD/od/run-[0-9]*.jsonl\$' log.txt"
expect_eq "log with -o DIR: no message and no per-process block" 0 "$(grep -c '^exitscope\|stats for process' log.txt)"
rm -rf od log.txt

# --- a script behind a wrapper: one summary naming each program ---
cat >job.sh <<'SCRIPT'
python3 -c 'import sys; print(sum(range(10)))' | sort | tr -d '\n' >job.out
SCRIPT
"$XS" run --log log.txt -- sh -c 'exec sh ./job.sh'
check "wrapper: the script's work ran" test "$(cat job.out)" = 45
check "wrapper: one summary naming python3, sort and tr" \
  sh -c 'test "$(grep -c "run summary" log.txt)" = 1 && grep "^  programs:" log.txt | grep -q "python3.* x 1" &&
         grep "^  programs:" log.txt | grep -q "sort x 1" && grep "^  programs:" log.txt | grep -q "tr x 1"'
rm -rf exitscope-* log.txt job.sh job.out

# --- a process killed by a signal: its end line and the report name the signal ---
"$XS" run --format none -- sh -c 'sh -c "kill -TERM \$\$"; true' >/dev/null 2>&1
d=$(ls -d exitscope-*)
expect_eq "signal death: the end line says how and which (SIGTERM = 15)" "signal 15" \
  "$(jq -r 'select(.event == "end" and .how == "signal") | "\(.how) \(.status)"' "$d/run.jsonl")"
check "signal death: report RUN's tree shows [signal 15]" sh -c "'$XS' report '$d' | grep -q '^    [0-9]* dash  \\[signal 15\\]'"
rm -rf exitscope-*

# --- diff: two run-wide windows of a run, and two runs ---
"$XS" run --format none -- "$T/tw_runtree" 4 1000 >/dev/null 2>&1
a=$(ls -d exitscope-*); mkdir -p runs; mv "$a" runs/
"$XS" run --format none -- "$T/tw_runtree" 2 1000 >/dev/null 2>&1
b=$(ls -d exitscope-*); mv "$b" runs/
"$XS" report --json "runs/$a" >ra.json
"$XS" diff --json "runs/$a:1" "runs/$a:2" >d12.json
same "diff RUN:1 RUN:2: each side is report --json's run window (exits)" \
  "$(jq -c '[.windows[0].totals.exits, .windows[1].totals.exits]' ra.json)" "$(jq -c '[.scalars.exits.a, .scalars.exits.b]' d12.json)"
expect_eq "diff RUN:1 RUN:2: getppid 4000 in window 1, 5000 after it" "4000 5000" \
  "$(jq -r '.syscalls[] | select(.name == "getppid") | "\(.calls.a) \(.calls.b)"' d12.json)"
"$XS" diff --json "runs/$a" "runs/$b" >dab.json
expect_eq "diff RUN_A RUN_B: the whole runs (getppid 9000 against 2 x 1000 + 2 x 1000 + 1000)" "9000 5000 -4000" \
  "$(jq -r '.syscalls[] | select(.name == "getppid") | "\(.calls.a) \(.calls.b) \(.calls.delta)"' dab.json)"
"$XS" diff "runs/$a:1" "runs/$b:1" >dab.txt
check "diff RUN:1 RUN:1 (text): the headers name each run's window" \
  sh -c "grep -q '^A: runs/$a/run.jsonl: the run of pid [0-9]*, run window 1, reason app, label \"inside\"' dab.txt &&
         grep -q '^B: runs/$b/run.jsonl: the run of pid [0-9]*, run window 1, reason app' dab.txt"
"$XS" diff "runs/$a:7" "runs/$b" 2>err.txt; st=$?
check "diff RUN:7 of a run with 1 window: status 1, says so" sh -c "test $st = 1 && grep -q 'no run-wide window 7' err.txt"
rm -rf runs exitscope-*
