#!/usr/bin/env bash
# t800: the runtime never runs on a stack it does not own (issue 14).
#  - real programs, each run RUNS times natively and under exitscope with the
#    same output and status every time: a dynamically linked (cgo) Go HTTP
#    server with its clients in the same process, busy goroutines (SIGURG
#    preemption) and LockOSThread goroutines whose threads exit; a Go
#    program that forks and execs (os/exec); a threaded Rust program (8 KiB
#    alternate stacks per thread); a C handler on an 8 KiB alternate stack
#    that closes windows and exits;
#  - torture targets (tests/targets/ts_*.c): the alternate stack's rules
#    (nesting on it, EPERM and SS_ONSTACK inside a handler, SS_AUTODISARM),
#    siglongjmp out of handlers that interrupted blocking calls, signals
#    while threads exit;
#  - deterministic programs: per-call counts equal strace -f -c's
#    (lib-strace-agree.py, as in t300).
# The Go and Rust programs are built here (golang-go, rustc).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0
RUNS=${XS_T800_RUNS:-5}
SRC=$XS_ROOT/tests/stacks
B=$SCRATCH/bin; mkdir -p "$B"

# build NAME CMD...: a check that the build works.
build() { local n=$1; shift; check "t800 build $n" "$@"; }
export GOCACHE=$SCRATCH/gocache GOPATH=$SCRATCH/gopath GOFLAGS=-mod=mod GO111MODULE=on
build goserver sh -c "cd '$SRC/goserver' && CGO_ENABLED=1 go build -o '$B/goserver' ."
build goexec sh -c "cd '$SRC/goexec' && CGO_ENABLED=1 go build -o '$B/goexec' ."
build rust_threads rustc -O -o "$B/rust_threads" "$SRC/rust_threads.rs"
for g in goserver goexec; do
  check "t800 $g is dynamically linked (has an interpreter)" sh -c "readelf -l '$B/$g' | grep -q 'Requesting program interpreter'"
done

# same NAME CMD...: RUNS runs natively and RUNS under exitscope; every
# one's stdout and status equal the first native run's.
same() {
  local name=$1; shift
  local dir=$SCRATCH/same-$name ref st bad=() i
  mkdir -p "$dir"
  (cd "$dir" && timeout -s KILL 60 "$@" >"$dir/ref" 2>"$dir/ref.err" </dev/null); ref=$?
  for i in $(seq "$RUNS"); do
    (cd "$dir" && timeout -s KILL 60 "$@" >"$dir/n$i" 2>"$dir/n$i.err" </dev/null); st=$?
    { [ "$st" = "$ref" ] && cmp -s "$dir/ref" "$dir/n$i"; } || bad+=("native run $i: status $st (first $ref): $(diff "$dir/ref" "$dir/n$i" | head -n 3)")
    (cd "$dir" && timeout -s KILL 60 "$XS" run -o "$dir" --format none -- "$@" >"$dir/x$i" 2>"$dir/x$i.err" </dev/null); st=$?
    { [ "$st" = "$ref" ] && cmp -s "$dir/ref" "$dir/x$i"; } ||
      bad+=("exitscope run $i: status $st (native $ref)" "$(diff "$dir/ref" "$dir/x$i" | head -n 4)" "$(grep -v 'is the program.s now' "$dir/x$i.err" | head -c 400)")
  done
  if [ "${#bad[@]}" -eq 0 ]; then
    ok "t800 $name: $RUNS runs natively and $RUNS under exitscope, same output and status ($ref)"
  else
    fail "t800 $name: $RUNS runs natively and $RUNS under exitscope, same output and status" "${bad[@]}"
  fi
}

same goserver "$B/goserver"
same goexec "$B/goexec"
# The runtime removes its EXITSCOPE_ variables from the environment on the
# initial stack; Go finds the auxv past envp's end. One more (or one fewer)
# variable to remove must not matter (it did: "failed to get system page
# size" whenever their number was odd).
EXITSCOPE_T800_PARITY=1 same goexec-one-more-variable "$B/goexec"
same rust_threads "$B/rust_threads"
# %gs is the program's: arch_prctl(ARCH_SET_GS) and WRGSBASE, read through
# %gs across calls, signals, threads, fork and vfork
same gsbase "$T/th_gsbase"
same small-altstack-dump "$T/th_small_altstack" dump
same small-altstack-exit "$T/th_small_altstack" exit
for ts in ts_altstack_rules ts_longjmp_blocking ts_thread_exit_signal; do
  same "$ts" "$T/$ts"
done

# Every target in tests/targets/ts_*.c is run above.
missing=
for src in "$XS_ROOT"/tests/targets/ts_*.c; do
  n=$(basename "$src" .c)
  grep -q "ts_[a-z_]*" <<<"ts_altstack_rules ts_longjmp_blocking ts_thread_exit_signal" &&
    grep -qw "$n" <<<"ts_altstack_rules ts_longjmp_blocking ts_thread_exit_signal" || missing="$missing $n"
done
expect_eq "t800 every ts_ target is run" "" "$missing"

# agree NAME CMD...: exitscope's per-call counts equal strace's (t300's rule).
AGREE=$XS_ROOT/tests/integration/lib-strace-agree.py
agree() {
  local name=$1; shift
  local dir=$SCRATCH/agree-$name
  mkdir -p "$dir/records" "$dir/records-traced"
  (cd "$dir" && timeout 60 strace -f -C -U name,calls,errors -o "$dir/native.strace" -- "$@" >/dev/null 2>&1 </dev/null)
  (cd "$dir" && timeout 60 "$XS" run -o "$dir/records" --format none -- "$@" >/dev/null 2>&1 </dev/null)
  (cd "$dir" && timeout 60 strace -f -i -o "$dir/xs.trace" -- "$XS" run -o "$dir/records-traced" --format none -- "$@" >/dev/null 2>&1 </dev/null)
  if /usr/bin/python3 "$AGREE" check "$name" "$dir" >"$dir/check.out" 2>&1; then
    ok "t800 $name: per-call counts agree with strace -f -c"
  else
    local lines=(); mapfile -t lines <"$dir/check.out"
    fail "t800 $name: per-call counts agree with strace -f -c" "${lines[@]}"
  fi
}
agree ts_altstack_rules "$T/ts_altstack_rules"
agree ts_longjmp_blocking "$T/ts_longjmp_blocking"
