#!/usr/bin/env bash
# shellcheck disable=SC2016  # single quotes: the inner shell expands
# exitscope run: what it refuses, with which status and message, and that
# it passes argv, environment, standard streams and exit status through.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/../lib.sh"

out=$SCRATCH/out; mkdir -p "$out"

# run_status NAME EXPECTED_STATUS MESSAGE_PATTERN ARGS...
run_status() {
  local name=$1 want=$2 pattern=$3; shift 3
  "$XS" run "$@" >"$SCRATCH/o" 2>"$SCRATCH/e"
  local st=$?
  if [ "$st" -eq "$want" ] && grep -Eq -e "$pattern" "$SCRATCH/e" && { [ "$(wc -l < "$SCRATCH/e")" -eq 1 ] || [ "$want" -eq 2 ]; }; then
    ok "$name"
  else
    fail "$name" "status $st (want $want)" "stderr: $(head -c 400 "$SCRATCH/e")"
  fi
}

run_status "refuses a missing program (127)" 127 "'no-such-program-xyz': no such program" \
  -o "$out" -- no-such-program-xyz
run_status "refuses a missing path (127)" 127 "no such program" -o "$out" -- /nonexistent/prog
printf 'not a program\n' > "$SCRATCH/data"; chmod 644 "$SCRATCH/data"
run_status "refuses a non-executable file (126)" 126 "not an executable" -o "$out" -- "$SCRATCH/data"
chmod 755 "$SCRATCH/data"
run_status "refuses a file that is neither ELF nor script (126)" 126 "not an ELF executable or script" \
  -o "$out" -- "$SCRATCH/data"
cp "$T/tt_count_getppid" "$SCRATCH/suid"; chmod 4755 "$SCRATCH/suid"
run_status "refuses a setuid program (122)" 122 "setuid/setgid" -o "$out" -- "$SCRATCH/suid"
# Static programs run through exitscope-ld (issue 15; they were refused
# with 123 before it): one that exits 5, directly and as a script's
# interpreter; a setuid static one is refused like a dynamic one.
if printf 'int main(void){return 5;}\n' | cc -static -x c -o "$SCRATCH/static" - 2>/dev/null; then
  rm -f "$out"/exitscope-*.jsonl
  "$XS" run -o "$out" --format none -- "$SCRATCH/static" 2>"$SCRATCH/e"; st=$?
  check "runs a static program (its status 5, a record, nothing on stderr)" \
    bash -c "[ $st = 5 ] && ls '$out'/exitscope-*.jsonl >/dev/null 2>&1 && ! [ -s '$SCRATCH/e' ]"
  cp "$SCRATCH/static" "$SCRATCH/static_suid"; chmod 4755 "$SCRATCH/static_suid"
  run_status "refuses a setuid static program (122)" 122 "setuid/setgid" -o "$out" -- "$SCRATCH/static_suid"
else
  fail "runs a static program" "could not build a static test program (libc6-dev static libs?)"
fi
printf '#!%s\n' "$SCRATCH/static" > "$SCRATCH/script"; chmod 755 "$SCRATCH/script"
"$XS" run -o "$out" --format none -- "$SCRATCH/script" 2>"$SCRATCH/e"; st=$?
expect_eq "runs a script whose interpreter is static" "5" "$st"
# a script run by a static interpreter with 3000 arguments: exitscope-ld
# rebuilds the program's stack below the strings, bigger than the kernel's
# (it crashed when the loader still ran on that stack)
printf '#!/bin/busybox sh\necho "$#" "$1" "$3000"\n' > "$SCRATCH/many.sh"; chmod 755 "$SCRATCH/many.sh"
got=$("$XS" run -o "$out" --format none -- "$SCRATCH/many.sh" $(seq 1 3000) 2>&1; echo "st=$?")
expect_eq "a static interpreter's script with 3000 arguments" "3000 1 3000
st=0" "$got"
ld=$(dirname "$(readlink -f "$XS")")/lib/exitscope-ld
"$ld" >"$SCRATCH/o" 2>"$SCRATCH/e"; st=$?
check "exitscope-ld run by hand says how to use it (status 2)" \
  bash -c "[ $st = 2 ] && grep -q \"use 'exitscope run PROGRAM\" '$SCRATCH/e'"
run_status "refuses a missing output directory (124)" 124 "output directory" \
  -o "$SCRATCH/missing" -- /bin/true
# An unwritable directory: root writes anywhere, so t120 checks it as nobody.
if [ "$(id -u)" -ne 0 ]; then
  mkdir -p "$SCRATCH/ro"; chmod 555 "$SCRATCH/ro"
  run_status "refuses an unwritable output directory (124)" 124 "not writable" -o "$SCRATCH/ro" -- /bin/true
fi
run_status "bad option is a usage error (2)" 2 "unrecognized option '--bogus'" --bogus -- /bin/true
run_status "missing program is a usage error (2)" 2 "no program" -o "$out"
run_status "bad --signal is a usage error (2)" 2 "--signal" --signal KILL -- /bin/true
run_status "bad --interval is a usage error (2)" 2 "--interval" --interval 0 -- /bin/true
run_status "bad --format is a usage error (2)" 2 "--format" --format xml -- /bin/true

# pass-through: argv (with spaces and empty args), environment, stdin/stdout, status
got=$(printf 'in\n' | FOO='a b' "$XS" run -o "$out" --format none -- \
  sh -c 'read x; printf "%s|%s|%s|%s\n" "$x" "$1" "$2" "$FOO"; exit 7' sh 'arg one' '' ; echo "st=$?")
expect_eq "argv, environment, stdin, stdout and status pass through" "in|arg one||a b
st=7" "$got"
got=$("$XS" run -o "$out" --format none -- env | grep -c -E '^(EXITSCOPE_|LD_PRELOAD=)')
expect_eq "the program's environment has no exitscope variables" "0" "$got"
got=$(LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6 "$XS" run -o "$out" --format none -- sh -c 'echo "$LD_PRELOAD"')
expect_eq "a user's LD_PRELOAD is kept as the program set it" "/lib/x86_64-linux-gnu/libm.so.6" "$got"
"$XS" run -o "$out" --format none -- sh -c 'kill -TERM $$'; st=$?
expect_eq "death by a signal shows as 128+N" "143" "$st"
"$XS" run -o "$out" -- /bin/true 2>"$SCRATCH/log"
check "the log block goes to stderr by default" grep -q "exitscope stats for process" "$SCRATCH/log"
"$XS" run -o "$out" --log "$SCRATCH/file.log" -- /bin/true 2>"$SCRATCH/log2"
check "--log FILE gets the block and stderr stays clean" \
  bash -c "grep -q 'exitscope stats' '$SCRATCH/file.log' && ! [ -s '$SCRATCH/log2' ]"
"$XS" run -o "$out" --format gramine -- /bin/true 2>"$SCRATCH/log3"
check "--format gramine prints the SGX stats block" grep -q "# of EENTERs:" "$SCRATCH/log3"
"$XS" run -o "$out" --format none -- /bin/true 2>"$SCRATCH/log4"
check "--format none prints nothing" test ! -s "$SCRATCH/log4"
