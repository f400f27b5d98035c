#!/usr/bin/env bash
# t110: exact counts. Targets that know what they issue after main starts
# print a line "expect NAME=CALLS[/ERRORS] .COUNTER=N ..."; the last record
# (reason "exit") of their exitscope-<pid>.jsonl must hold exactly those
# numbers, its exits must equal the sum of its per-call counts, and its
# enters must be the exits minus the calls that do not return. Also: per-thread
# counts, fork children in their own file without the parent's counts, and an
# exec chain continuing one file.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0

# expect_val NAME EXPECTED ACTUAL: expect_eq, except that a missing value
# (no file, no record, no such field) always fails.
expect_val() {
  if [ -z "$3" ]; then fail "$1" "expected: $2" "actual:   (no value: missing file, record or field)"
  else expect_eq "$@"; fi
}

# xs_run DIR TARGET [ARG...]: run TARGET under exitscope with -o DIR; stdout
# goes to DIR.stdout, stderr to DIR.stderr, the status to DIR.status.
xs_run() {
  local dir=$1 target=$2; shift 2
  mkdir -p "$dir"
  { ( timeout -k 5 60 "$XS" run -o "$dir" -- "$T/$target" "$@" >"$dir.stdout" 2>"$dir.stderr" </dev/null ); } 2>/dev/null
  echo $? >"$dir.status"
}

# only_file DIR: the single exitscope-*.jsonl in DIR (empty if not exactly
# one), or the one named by the pid in DIR.pid when the target wrote that.
only_file() {
  if [ -s "$1.pid" ]; then echo "$1/exitscope-$(cat "$1.pid").jsonl"; return; fi
  local f=("$1"/exitscope-*.jsonl)
  if [ "${#f[@]}" -eq 1 ] && [ -e "${f[0]}" ]; then echo "${f[0]}"; fi
}

# jqr FILE FILTER: FILTER applied to FILE's last record ("" on any error).
jqr() { [ -n "$1" ] && [ -s "$1" ] && tail -n 1 "$1" | jq -r "$2" 2>/dev/null; }

# check_record NAME FILE: the last record is a well-formed exit record whose
# exits, enters and per-call counts agree with each other.
check_record() {
  local name=$1 file=$2
  expect_val "$name: file written, last record reason exit" exit "$(jqr "$file" .reason)"
  expect_val "$name: total.exits == sum of total.syscalls[].calls" \
    "$(jqr "$file" '[.total.syscalls[].calls] | add // 0')" "$(jqr "$file" .total.exits)"
  local want
  want=$(jqr "$file" '.total | .exits - ([.syscalls | (.exit, .exit_group, .rt_sigreturn) | .calls // 0] | add)
                      - ((.syscalls.execve.calls // 0) - (.syscalls.execve.errors // 0))
                      - ((.syscalls.execveat.calls // 0) - (.syscalls.execveat.errors // 0))')
  expect_val "$name: total.enters == exits - calls that do not return" "$want" "$(jqr "$file" .total.enters)"
}

# check_expect NAME FILE SCOPE LINE: one check per token of an expect LINE
# against SCOPE (a jq path such as .total or .window) of FILE's last record.
check_expect() {
  local name=$1 file=$2 scope=$3 line=$4 tok key val calls errors
  if [ -z "$line" ]; then fail "$name: target printed its expect line"; return; fi
  for tok in ${line#expect }; do
    key=${tok%%=*} val=${tok#*=}
    case $key in
    .*)
      expect_val "$name: $scope$key" "$val" "$(jqr "$file" "$scope$key")" ;;
    *)
      calls=${val%%/*}
      expect_val "$name: $key calls" "$calls" "$(jqr "$file" "$scope.syscalls[\"$key\"].calls // 0")"
      if [ "$val" != "$calls" ]; then
        errors=${val#*/}
        expect_val "$name: $key errors" "$errors" "$(jqr "$file" "$scope.syscalls[\"$key\"].errors // 0")"
      fi ;;
    esac
  done
}

# simple NAME TARGET [ARG...]: a single-process target with an expect line.
simple() {
  local name=$1 target=$2; shift 2
  local dir="$SCRATCH/$name" file
  xs_run "$dir" "$target" "$@"
  expect_val "$name: exit status" 0 "$(cat "$dir.status")"
  file=$(only_file "$dir")
  check_record "$name" "$file"
  check_expect "$name" "$file" .total "$(grep '^expect ' "$dir.stdout")"
}

simple count-getppid tt_count_getppid 1000
simple count-getppid-1 tt_count_getppid 1
simple count-io tt_count_io
simple count-signals tt_count_signals
simple count-asm-syscall tt_asm_syscall
simple count-clone-raw-threads tt_clone_raw "$SCRATCH/count-clone-raw-threads.pid"
simple count-clone3-asm-threads tt_clone3_thread

# Threads: per-thread counts and names while all threads are alive at exit,
# and totals that keep what joined threads did.
for mode in live join; do
  name=count-threads-$mode
  dir="$SCRATCH/$name"
  simple "$name" tt_count_threads "$dir.tids" "$mode"
  [ "$mode" = live ] || continue
  file=$(only_file "$dir")
  if [ ! -s "$dir.tids" ]; then fail "$name: target wrote its thread list"; continue; fi
  while read -r tid calls comm; do
    expect_val "$name: thread $comm getppid calls" "$calls" \
      "$(jqr "$file" "[.threads[] | select(.tid == $tid) | .total.syscalls.getppid.calls // 0] | add")"
    [ "$comm" = main ] && continue
    expect_val "$name: thread $comm comm" "$comm" "$(jqr "$file" ".threads[] | select(.tid == $tid) | .comm")"
  done <"$dir.tids"
  expect_val "$name: sum of threads[].total.exits == total.exits" \
    "$(jqr "$file" .total.exits)" "$(jqr "$file" '[.threads[].total.exits] | add')"
done

# fork: the child gets its own file and starts from zero.
name=count-fork
dir="$SCRATCH/$name"
xs_run "$dir" tt_count_fork "$dir.pids"
read -r ppid cpid <"$dir.pids" || ppid=none
pfile="$dir/exitscope-$ppid.jsonl" cfile="$dir/exitscope-$cpid.jsonl"
check "$name: parent and child each have their own file" test -s "$pfile" -a -s "$cfile" -a "$ppid" != "$cpid"
check_record "$name parent" "$pfile"
check_expect "$name parent" "$pfile" .total "$(grep '^expect ' "$dir.stdout")"
expect_val "$name child: record names the child pid" "$cpid" "$(jqr "$cfile" .pid)"
expect_val "$name child: last record reason exit" exit "$(jqr "$cfile" .reason)"
expect_val "$name child: only its own getppid calls (parent made 10 before fork)" 25 \
  "$(jqr "$cfile" '.total.syscalls.getppid.calls // 0')"
expect_val "$name child: exit_group calls" 1 "$(jqr "$cfile" '.total.syscalls.exit_group.calls // 0')"
expect_val "$name child: windows numbered from 0" 0 "$(jqr "$cfile" .seq)"
expect_val "$name: exactly two files" 2 "$(find "$dir" -name 'exitscope-*.jsonl' | wc -l)"

# exec chain: one file, records exec, exec, exit with seq 0, 1, 2; each
# image's window holds its own getppid calls (3, 5, 7) and its execve or
# exit_group as the one call that did not return.
name=exec-chain
dir="$SCRATCH/$name"
xs_run "$dir" tt_exec_chain
file=$(only_file "$dir")
expect_val "$name: exit status" 0 "$(cat "$dir.status")"
expect_val "$name: one file for the whole chain" 1 "$(find "$dir" -name 'exitscope-*.jsonl' | wc -l)"
records() { [ -n "$file" ] && jq -sc "$1" "$file" 2>/dev/null; }
expect_val "$name: reasons" '["exec","exec","exit"]' "$(records '[.[].reason]')"
expect_val "$name: seq" '[0,1,2]' "$(records '[.[].seq]')"
expect_val "$name: every record has the file's pid" \
  "[\"$(basename "$file" .jsonl | sed 's/^exitscope-//')\"]" "$(records '[.[].pid | tostring] | unique')"
expect_val "$name: window getppid calls per image" '[3,5,7]' \
  "$(records '[.[] | .window.syscalls.getppid.calls // 0]')"
expect_val "$name: window exits - enters per image" '[1,1,1]' "$(records '[.[].window | .exits - .enters]')"
expect_val "$name: window execve calls per image" '[1,1,0]' "$(records '[.[] | .window.syscalls.execve.calls // 0]')"
expect_val "$name: window exits == sum of window calls" '[true,true,true]' \
  "$(records '[.[].window | .exits == ([.syscalls[].calls] | add // 0)]')"
check_expect "$name: last image" "$file" .window "$(grep '^expect ' "$dir.stdout")"

# Death by a signal is a process exit too: the last window is still written.
for mode in term abort segv; do
  name=death-$mode
  dir="$SCRATCH/$name"
  xs_run "$dir" tt_signal_death "$mode"
  file=$(only_file "$dir")
  expect_val "$name: final record written with reason exit and 20 getppid calls" "exit 20" \
    "$(jqr "$file" '"\(.reason) \(.total.syscalls.getppid.calls // 0)"')"
done
