#!/usr/bin/env bash
# t100: every torture target (tests/targets/tt_*.c) behaves exactly as it does
# natively when run under exitscope: same stdout, same exit status (128+N for
# death by signal N). One check per target run.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0

# run_status OUTFILE ERRFILE CMD...: run CMD with a 60 s limit, print its
# status. The subshell keeps bash's "Terminated" notices out of the output.
run_status() {
  local out=$1 err=$2; shift 2
  { ( timeout -k 5 60 "$@" >"$out" 2>"$err" </dev/null ); } 2>/dev/null; echo $?
}

# compare NAME TARGET [ARG...]: run TARGET natively and under exitscope.
compare() {
  local name=$1 target=$2; shift 2
  local base="$SCRATCH/$name" native xs
  mkdir -p "$base.dir"
  native=$(run_status "$base.native" "$base.native.err" "$T/$target" "$@")
  xs=$(run_status "$base.xs" "$base.xs.err" "$XS" run -o "$base.dir" -- "$T/$target" "$@")
  if [ "$native" = 124 ] || { [ "$native" = 137 ] && [ "$target" != tt_signal_death ]; }; then
    fail "$name" "native run timed out or was killed (status $native): the target itself is broken"
  elif [ "$native" = "$xs" ] && cmp -s "$base.native" "$base.xs"; then
    ok "$name"
  else
    local -a d e
    mapfile -t d < <(diff "$base.native" "$base.xs" | head -n 12)
    mapfile -t e < <(head -c 600 "$base.xs.err" | head -n 6)
    fail "$name" "exit status native $native, under exitscope $xs" \
      "stdout diff (< native, > exitscope):" "${d[@]}" "stderr under exitscope:" "${e[@]}"
  fi
}

compare torture-threads tt_threads
compare torture-fork tt_fork
compare torture-vfork tt_vfork
compare torture-spawn tt_spawn
compare torture-clone-raw tt_clone_raw
compare torture-clone3-fork tt_clone3_fork
compare torture-clone3-thread tt_clone3_thread
compare torture-exec-chain tt_exec_chain
compare torture-sigalrm-read tt_sigalrm_read
compare torture-siglongjmp tt_siglongjmp
compare torture-altstack-overflow tt_altstack
compare torture-sigsuspend tt_sigsuspend
compare torture-seccomp-trap tt_seccomp_trap
compare torture-asm-syscall tt_asm_syscall
compare torture-exit-group-thread tt_exit_group_thread
compare torture-nested-signals tt_nested_signals
compare torture-nanosleep-eintr tt_nanosleep_eintr
compare torture-fd-space tt_fd_space
for mode in term abort segv kill pending usr2 waited; do
  compare "torture-signal-death-$mode" tt_signal_death "$mode"
done
compare torture-count-getppid tt_count_getppid 1000
compare torture-count-io tt_count_io
compare torture-count-threads-live tt_count_threads "$SCRATCH/threads.txt" live
compare torture-count-threads-join tt_count_threads "$SCRATCH/threads.txt" join
compare torture-count-fork tt_count_fork "$SCRATCH/fork.txt"
compare torture-count-signals tt_count_signals

# Every target in tests/targets/tt_*.c must be listed above.
listed=$(grep -o 'tt_[a-z0-9_]*' "$0" | sort -u)
missing=
for src in "$XS_ROOT"/tests/targets/tt_*.c; do
  n=$(basename "$src" .c)
  grep -qx "$n" <<<"$listed" || missing="$missing $n"
done
expect_eq torture-every-target-listed "" "$missing"
