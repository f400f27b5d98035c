#!/usr/bin/env bash
# t850: the fast path against its pitfalls (issue 11). Each tf_* target
# (tests/targets/tf_common.h says what they print) runs three ways: natively,
# under `exitscope run` (fast path, the default) and under
# `exitscope run --no-fast-path`. Checks:
#   - the same stdout and exit status (0) in all three, no WRONG or
#     "skipped:" line (this machine kind has AVX-512);
#   - the same windows, and in each window after "begin" the same calls
#     and errors per system call with and without the fast path (minus the
#     calls a target names as polling: "vary");
#   - the exact counts the target knows ("expect"), in both runs, also in
#     the records of fork/vfork children;
#   - exits_fast > 0 with the fast path and == 0 without it in the windows
#     whose hot site is an inline `mov $NR,%eax; syscall` or a libc wrapper
#     ("fast"), and == 0 in both for a site that must never be rewritten
#     ("nofast": an RWX page).
# Then real programs (dd, gzip, sqlite3, python3) with and without the fast
# path: the same output and the same counts per system call.
# The fast runs unset EXITSCOPE_FAST_PATH, so that this script still compares
# both paths when the whole suite runs with EXITSCOPE_FAST_PATH=off.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0

# run3 NAME CMD...: run CMD natively, fast and nofast; for each MODE the
# record directory is $SCRATCH/NAME.MODE, with .stdout, .stderr, .status.
run3() {
  local name=$1 mode dir; shift
  for mode in native fast nofast; do
    dir=$SCRATCH/$name.$mode
    mkdir -p "$dir"
    case $mode in
    native) (cd "$dir" && timeout -k 5 300 "$@" >"$dir.stdout" 2>"$dir.stderr" </dev/null) ;;
    fast) (cd "$dir" && timeout -k 5 300 env -u EXITSCOPE_FAST_PATH "$XS" run -o "$dir" --format none -- "$@" \
             >"$dir.stdout" 2>"$dir.stderr" </dev/null) ;;
    nofast) (cd "$dir" && timeout -k 5 300 "$XS" run --no-fast-path -o "$dir" --format none -- "$@" \
               >"$dir.stdout" 2>"$dir.stderr" </dev/null) ;;
    esac
    echo $? >"$dir.status"
  done
}

# main_file DIR: the record file of the process that closed the window
# "begin" (children have their own files), else the only file in DIR.
main_file() {
  local f all=()
  for f in "$1"/exitscope-*.jsonl; do
    [ -e "$f" ] || continue
    all+=("$f")
    if jq -se 'any(.[]; .label == "begin")' "$f" >/dev/null 2>&1; then printf '%s' "$f"; return; fi
  done
  [ "${#all[@]}" -eq 1 ] && printf '%s' "${all[0]}"
}

# win FILE LABEL FILTER: FILTER applied to the window of the record labelled
# LABEL in FILE ("" on any error or no such record).
win() {
  [ -n "$1" ] && [ -s "$1" ] || return 0
  jq -r --arg l "$2" "select(.label == \$l) | .window | $3" "$1" 2>/dev/null | head -n 1
}

# counts FILE LABEL VARY: {name: "calls/errors"} of window LABEL, without the
# names in VARY (space separated); LABEL "@total" is the last record's total.
counts() {
  # shellcheck disable=SC2016 # jq variables, not the shell's
  local filter='.syscalls | with_entries(select(.key as $k | $vary | index($k) | not))
                | map_values("\(.calls)/\(.errors)")'
  [ -n "$1" ] && [ -s "$1" ] || return 0
  if [ "$2" = @total ]; then
    tail -n 1 "$1" | jq -cS --arg v "$3" "(\$v | split(\" \")) as \$vary | .total | $filter" 2>/dev/null
  else
    jq -cS --arg l "$2" --arg v "$3" \
      "(\$v | split(\" \")) as \$vary | select(.label == \$l) | .window | $filter" "$1" 2>/dev/null | head -n 1
  fi
}

expect_val() {
  if [ -z "$3" ]; then fail "$1" "expected: $2" "actual:   (no value: missing file, record or field)"
  else expect_eq "$@"; fi
}

# same_output NAME: stdout and status equal in the three runs, status 0.
same_output() {
  local name=$1 base=$SCRATCH/$1
  expect_val "$name native: exit status" 0 "$(cat "$base.native.status")"
  expect_val "$name fast: exit status" 0 "$(cat "$base.fast.status")"
  expect_val "$name no-fast: exit status" 0 "$(cat "$base.nofast.status")"
  if cmp -s "$base.native.stdout" "$base.fast.stdout" && cmp -s "$base.native.stdout" "$base.nofast.stdout"; then
    ok "$name: the same stdout natively, fast and no-fast"
  else
    fail "$name: the same stdout natively, fast and no-fast" \
      "$(diff "$base.native.stdout" "$base.fast.stdout" | head -n 10)" "--- no-fast:" \
      "$(diff "$base.native.stdout" "$base.nofast.stdout" | head -n 10)"
  fi
}

# target NAME [ARG...]: the tf_NAME target, all checks.
target() {
  local name=$1; shift
  local base=$SCRATCH/$name mode f ff nf line label key val scope tok vary labels_f labels_n l pid
  run3 "$name" "$T/tf_$name" "$@"
  same_output "$name"
  if [ -s "$base.native.stdout" ] && ! grep -qE '^(WRONG|skipped)' "$base.native.stdout" &&
     grep -q '^all checks held$' "$base.native.stdout"; then
    ok "$name: every check held (no WRONG or skipped line)"
  else
    fail "$name: every check held (no WRONG or skipped line)" "$(grep -vE '^ok ' "$base.native.stdout" | head -n 10)"
  fi
  ff=$(main_file "$base.fast") nf=$(main_file "$base.nofast")
  check "$name: records written fast and no-fast" test -s "$ff" -a -s "$nf"

  # The same labelled windows, and the same counts in each (after "begin").
  labels_f=$( [ -s "$ff" ] && jq -r 'select(.label != null) | .label' "$ff" | tr '\n' ' ')
  labels_n=$( [ -s "$nf" ] && jq -r 'select(.label != null) | .label' "$nf" | tr '\n' ' ')
  expect_val "$name: the same windows fast and no-fast" "$labels_n" "$labels_f"
  for l in $labels_n; do
    [ "$l" = begin ] && continue
    vary=$(sed -n "s/^vary $l //p" "$base.nofast.stderr" | head -n 1)
    expect_val "$name: window $l: the same calls/errors per system call fast and no-fast${vary:+ (not: $vary)}" \
      "$(counts "$nf" "$l" "$vary")" "$(counts "$ff" "$l" "$vary")"
  done

  # Children: the same totals with and without the fast path.
  while read -r _ label _; do
    pid=$(sed -n "s/^child $label //p" "$base.fast.stderr")
    f="$base.fast/exitscope-$pid.jsonl"
    pid=$(sed -n "s/^child $label //p" "$base.nofast.stderr")
    expect_val "$name: child $label: the same totals fast and no-fast" \
      "$(counts "$base.nofast/exitscope-$pid.jsonl" @total "")" "$(counts "$f" @total "")"
  done < <(grep '^child ' "$base.nofast.stderr")

  for mode in fast nofast; do
    f=$(main_file "$base.$mode")
    # Exact counts.
    while read -r _ scope line; do
      for tok in $line; do
        key=${tok%%=*} val=${tok#*=}
        case $scope in
        child:*)
          pid=$(sed -n "s/^child ${scope#child:} //p" "$base.$mode.stderr")
          expect_val "$name $mode: $scope: $key" "$val" \
            "$( [ -s "$base.$mode/exitscope-$pid.jsonl" ] && tail -n 1 "$base.$mode/exitscope-$pid.jsonl" |
                jq -r ".total.syscalls[\"$key\"] // {calls: 0, errors: 0} | \"\(.calls)/\(.errors)\"" |
                { if [ "$val" = "${val%/*}" ]; then sed 's,/.*,,'; else cat; fi; })" ;;
        *)
          expect_val "$name $mode: window $scope: $key" "$val" \
            "$(win "$f" "$scope" ".syscalls[\"$key\"] // {calls: 0, errors: 0} | \"\(.calls)/\(.errors)\"" |
               { if [ "$val" = "${val%/*}" ]; then sed 's,/.*,,'; else cat; fi; })" ;;
        esac
      done
    done < <(grep '^expect ' "$base.$mode.stderr")
    # Which path the calls took. "trapped LABEL CALL": every CALL of the
    # window trapped (exits_dispatch covers them), whatever else went fast.
    while read -r label call; do
      val=$(win "$f" "$label" "(.exits_dispatch // -1) - (.syscalls[\"$call\"].calls // 0)")
      if [ -n "$val" ] && [ "$val" -ge 0 ] 2>/dev/null; then ok "$name $mode: window $label: every $call trapped"
      else fail "$name $mode: window $label: every $call trapped" "exits_dispatch - $call calls: ${val:-(none)}"; fi
    done < <(sed -n 's/^trapped //p' "$base.$mode.stderr")
    while read -r kind label; do
      case $label in
      child:*)
        pid=$(sed -n "s/^child ${label#child:} //p" "$base.$mode.stderr")
        val=$( [ -s "$base.$mode/exitscope-$pid.jsonl" ] && tail -n 1 "$base.$mode/exitscope-$pid.jsonl" |
               jq -r '.total.exits_fast // empty') ;;
      *) val=$(win "$f" "$label" '.exits_fast // empty') ;;
      esac
      if [ "$kind" = fast ] && [ "$mode" = fast ]; then
        if [ -n "$val" ] && [ "$val" -gt 0 ] 2>/dev/null; then ok "$name fast: window $label: exits_fast > 0 ($val)"
        else fail "$name fast: window $label: exits_fast > 0" "actual: ${val:-(no exits_fast field)}"; fi
      else
        expect_val "$name $mode: window $label: exits_fast == 0" 0 "$val"
      fi
    done < <(grep -E '^(fast|nofast) ' "$base.$mode.stderr")
  done
}

target redzone
target regs
target flags
target threads 100000
target restart
target sighot
target fork
target dlopen
target jit
target straddle
target regmov 50000

# ---- real programs: output and counts per system call, fast vs no-fast ----
# program NAME WINDOW CMD...: WINDOW is a label whose window is compared, or
# @total for the whole run (the last record's totals).
program() {
  local name=$1 window=$2; shift 2
  local base=$SCRATCH/$name ff nf
  run3 "$name" "$@"
  same_output "$name"
  ff=$(main_file "$base.fast") nf=$(main_file "$base.nofast")
  if [ "$window" = @total ]; then
    ff=$(find "$base.fast" -name 'exitscope-*.jsonl' | head -n 1)
    nf=$(find "$base.nofast" -name 'exitscope-*.jsonl' | head -n 1)
  fi
  check "$name: records written fast and no-fast" test -s "$ff" -a -s "$nf"
  local cf cn
  cf=$(counts "$ff" "$window" "") cn=$(counts "$nf" "$window" "")
  expect_val "$name: $window: the same calls/errors per system call fast and no-fast" "$cn" "$cf"
  if [ "$window" = @total ]; then
    printf '%s' "$(tail -n 1 "$ff" 2>/dev/null | jq -r '.total.exits_fast // empty' 2>/dev/null)" >"$base.fast.xf"
  else
    win "$ff" "$window" '.exits_fast // empty' >"$base.fast.xf"
  fi
}

# expect_fast NAME: the fast run of program NAME took the fast path.
expect_fast() {
  local v
  v=$(cat "$SCRATCH/$1.fast.xf")
  if [ -n "$v" ] && [ "$v" -gt 0 ] 2>/dev/null; then ok "$1 fast: exits_fast > 0 ($v)"
  else fail "$1 fast: exits_fast > 0" "actual: ${v:-(no exits_fast field)}"; fi
}

program dd @total dd if=/dev/zero of=/dev/null bs=512 count=20000 status=none
expect_val "dd: 20000 writes in the fast run" 20000 \
  "$(tail -n 1 "$(find "$SCRATCH/dd.fast" -name 'exitscope-*.jsonl' | head -n 1)" | jq -r '.total.syscalls.write.calls')"
expect_fast dd

seq 1 300000 >"$SCRATCH/numbers.txt"
program gzip @total gzip -c -6 "$SCRATCH/numbers.txt"
check "gzip: the output decompresses to the input" \
  sh -c "gzip -dc <'$SCRATCH/gzip.fast.stdout' | cmp -s - '$SCRATCH/numbers.txt'"

cat >"$SCRATCH/script.sql" <<'EOF'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000)
INSERT INTO t SELECT x, printf('row %d', x) FROM c;
SELECT count(*), sum(a), max(b) FROM t;
EOF
# Each run makes its own database file in its own directory (run3 cds there).
program sqlite3 @total sh -c "exec sqlite3 db.sqlite <'$SCRATCH/script.sql'"

# python3: the window "py" is closed by the program itself; start-up before
# "begin" is not compared.
program python3 py /usr/bin/python3 -c '
import os
def mark(label):
    try:
        fd = os.open("/dev/exitscope", os.O_WRONLY)
    except OSError:
        return
    os.write(fd, ("dump %s\n" % label).encode())
    os.close(fd)
mark("begin")
n = 0
for _ in range(20000):
    n += os.getppid() > 0
mark("py")
print("getppid calls:", n)
'
expect_val "python3: window py: 20000 getppid in the fast run" 20000 \
  "$(win "$(main_file "$SCRATCH/python3.fast")" py '.syscalls.getppid.calls')"
expect_fast python3

# A profile of a hot loop: samples taken while a call is in the fast entry
# (its stub, trampoline or C code) are attributed to the program's own
# syscall instruction, with the program's stack: perf shows no frame of
# the runtime and no unknown address at the leaf. Both call-graph modes.
for mode in dwarf fp; do
  d="$SCRATCH/prof-$mode"; mkdir -p "$d"
  if ! (cd "$d" && "$XS" run -p -F 999 -g "$mode" --format none -o . -- "$T/tf_threads" 100000 >/dev/null 2>"$d.err"); then
    fail "profile $mode: exit status" "$(head -c 1000 "$d.err")"; continue
  fi
  : >"$d.script"
  for data in "$d"/exitscope-*-*.data; do
    [ -e "$data" ] || continue
    perf script -i "$data" -F ip,sym,dso >>"$d.script" 2>"$d.perr" || { fail "profile $mode: perf script reads $data" "$(head -c 1000 "$d.perr")"; continue 2; }
  done
  # each sample: its frames, leaf first, then a blank line
  awk 'BEGIN { leaf = 1 } NF == 0 { leaf = 1; next } leaf { print; leaf = 0 }' "$d.script" >"$d.leaves"
  samples=$(grep -c . "$d.leaves" || true)
  if [ "${samples:-0}" -lt 50 ]; then fail "profile $mode: at least 50 samples" "got ${samples:-0}"; continue; fi
  bad=$(grep -E 'libexitscope|\[unknown\]' "$d.leaves" | head -n 3)
  if [ -z "$bad" ]; then ok "profile $mode: $samples samples, no leaf in the runtime or unknown"
  else fail "profile $mode: no leaf in the runtime or unknown" "$bad"; fi
done

# A signal at the edge of a call (tf_edge): N getppid calls under a 50 µs
# interval timer are N calls and no error, with the fast path and without;
# then N pipe write+read pairs under the timer all move their bytes (exit 0).
for mode in fast nofast; do
  d="$SCRATCH/edge-$mode"; mkdir -p "$d"
  flag=; [ "$mode" = nofast ] && flag=--no-fast-path
  # shellcheck disable=SC2086
  (cd "$d" && EXITSCOPE_FAST_PATH=on "$XS" run $flag --format none -o . -- "$T/tf_edge" 1000000 >out 2>err)
  expect_val "edge $mode: exit status (every pipe call moved its bytes)" 0 "$?"
  expect_val "edge $mode: what it printed" "signals handled: some
pipe write+read pairs that failed: 0" "$(cat "$d/out")"
  expect_val "edge $mode: getppid calls/errors with a 50 µs timer firing" "1000000/0" \
    "$(jq -r 'select(.reason == "exit") | .total.syscalls.getppid | "\(.calls)/\(.errors)"' "$d"/exitscope-*.jsonl 2>/dev/null)"
done
