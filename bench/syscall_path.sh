#!/usr/bin/env bash
# bench/syscall_path.sh: where the time of one system call under exitscope
# goes. Prints a markdown section on stdout (progress on stderr).
#   1. ns per getppid call, variants alternating over SP_ROUNDS rounds:
#      native; bench/sud_floor empty (Syscall User Dispatch with a handler
#      that does nothing: the kernel's SIGSYS delivery and rt_sigreturn);
#      bench/sud_floor pass (the same handler makes the real call: the
#      smallest interposer); exitscope run (bench/getppid_loop), and with
#      --no-fast-path; and the fast path step by step (bench/fp_floor, on a
#      site shaped like glibc's getppid: raw call, dispatch armed with the
#      call in the allowed region, a trampoline round trip, the trampoline
#      plus counting, plus two TSC reads; glibc's getppid() natively, under
#      exitscope run and under --no-fast-path), with the share of exitscope's
#      exits that took the fast path (bench/exits.py).
#   2. perf stat: kernel entries and signal deliveries per call, natively and
#      under exitscope (tracepoints raw_syscalls:sys_enter,
#      signal:signal_deliver), and whether the VM has hardware counters.
#   3. perf record -e cpu-clock -g on exitscope run -- getppid_loop: the
#      share of the samples per symbol, and per part of the path.
# Needs root for the tracepoints and kernel symbols; stops with a non-zero
# status if a step fails.
# Environment: XS_BUILD (build), SP_ROUNDS (5), SP_N (500000).
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root" || exit 2
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
XS_BUILD=${XS_BUILD:-$root/build}
XS=$XS_BUILD/exitscope
SP_ROUNDS=${SP_ROUNDS:-5}
SP_N=${SP_N:-500000}
LOOP=$XS_BUILD/bench/getppid_loop
FLOOR=$XS_BUILD/bench/sud_floor
FP=$XS_BUILD/bench/fp_floor
for f in "$XS" "$LOOP" "$FLOOR" "$FP"; do [ -x "$f" ] || die "syscall_path: missing '$f' (bench/run builds it)"; done
command -v perf >/dev/null || die "syscall_path: perf is not installed"
[ "$(id -u)" = 0 ] || die "syscall_path: needs root (tracepoints, kernel symbols)"
VTMP=$(mktemp -d "${TMPDIR:-/tmp}/xs-sp.XXXXXX")
trap 'rm -rf "$VTMP"' EXIT

ns_of() {
  local out
  out=$("$@" 2>"$VTMP/err") || die "syscall_path: '$*' failed: $(head -c 300 "$VTMP/err")"
  [[ $out =~ ^ns_per_call\ ([0-9.]+)$ ]] || die "syscall_path: '$*' printed '$out'"
  echo "${BASH_REMATCH[1]}"
}

# Each exitscope variant keeps its records in a directory of its own, so that
# the share of fast exits is read from its runs alone.
declare -A ns
say "syscall_path: ns per getppid, $SP_ROUNDS rounds"
for r in $(seq "$SP_ROUNDS"); do
  for v in native empty pass xs xsnf raw region tramp count count_tsc libc xs_libc xsnf_libc; do
    mkdir -p "$VTMP/rec-$v"
    case $v in
      xs) x=$(ns_of "$XS" run -o "$VTMP/rec-$v" --format none -- "$LOOP" "$SP_N") ;;
      xsnf) x=$(ns_of "$XS" run --no-fast-path -o "$VTMP/rec-$v" --format none -- "$LOOP" "$SP_N") ;;
      xs_libc) x=$(ns_of "$XS" run -o "$VTMP/rec-$v" --format none -- "$FP" libc "$SP_N") ;;
      xsnf_libc) x=$(ns_of "$XS" run --no-fast-path -o "$VTMP/rec-$v" --format none -- "$FP" libc "$SP_N") ;;
      raw | region | tramp | count | count_tsc | libc) x=$(ns_of "$FP" "$v" "$SP_N") ;;
      *)  x=$(ns_of "$FLOOR" "$v" "$SP_N") ;;
    esac
    ns[$v]+="$x "
    say "  round $r $v: $x"
  done
done
frame=$("$FLOOR" empty 1 2>&1 >/dev/null | sed -n 's/^sigframe_min_bytes //p')
med() { tr ' ' '\n' <<<"${ns[$1]}" | grep . | sort -g | awk '{ v[NR] = $1 } END { printf "%.0f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { tr ' ' '\n' <<<"${ns[$1]}" | grep . | sort -g | awk '{ v[NR] = $1 } END { printf "%.0f (%.0f–%.0f)", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'; }
m_nat=$(med native); m_empty=$(med empty); m_pass=$(med pass); m_xsnf=$(med xsnf)
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f%%", 100 * a / b }'; }
# dmed A B: median A - median B, signed
dmed() { echo $(($(med "$1") - $(med "$2"))); }
# fast VARIANT: the share of the variant's exits (all rounds) that took the fast path
fast() {
  local e f h
  read -r e f h < <(/usr/bin/python3 bench/exits.py "$VTMP/rec-$1"/exitscope-*.jsonl) || die "syscall_path: no record of $1"
  [ -n "${h:-}" ] || die "syscall_path: no record of $1"
  if [ "$h" = 0 ]; then echo "n/a (no exits_fast field)"
  else awk -v e="$e" -v f="$f" 'BEGIN { printf "%.1f%% of %d", 100 * f / e, e }'; fi
}
for v in xsnf xsnf_libc; do
  read -r _ f _ < <(/usr/bin/python3 bench/exits.py "$VTMP/rec-$v"/exitscope-*.jsonl)
  [ "${f:-x}" = 0 ] || die "syscall_path: under --no-fast-path ($v), $f exits took the fast path"
done

# 2. perf stat: entries and deliveries per call
say "syscall_path: perf stat"
pstat() {
  perf stat -x, -e raw_syscalls:sys_enter,signal:signal_deliver,task-clock -o "$VTMP/stat" -- "$@" >/dev/null 2>"$VTMP/err" ||
    die "syscall_path: perf stat $* failed: $(head -c 300 "$VTMP/err")"
  awk -F, -v n="$SP_N" '$3 == "raw_syscalls:sys_enter" { e = $1 } $3 == "signal:signal_deliver" { s = $1 }
    END { printf "%.2f %.2f\n", e / n, s / n }' "$VTMP/stat"
}
read -r e_nat s_nat < <(pstat "$LOOP" "$SP_N")
read -r e_xs s_xs < <(pstat "$XS" run --no-fast-path -o "$VTMP" --format none -- "$LOOP" "$SP_N")
read -r e_fp s_fp < <(pstat "$XS" run -o "$VTMP" --format none -- "$LOOP" "$SP_N")
if [ -z "${e_xs:-}" ] || [ -z "${e_fp:-}" ]; then die "syscall_path: perf stat gave no counts"; fi
hw=$(perf stat -x, -e cycles -- true 2>&1 >/dev/null | grep -c 'not supported' || true)
hwnote="This VM has hardware counters."
[ "$hw" -gt 0 ] && hwnote="This VM exposes no hardware counters (\`perf stat -e cycles\`: <not supported>), so the profile below samples \`cpu-clock\` (a software timer): samples land where interrupts are enabled, so time spent in the kernel's entry and exit paths (interrupts off) is credited to the first instruction after them, often a user-space one right after a return from the kernel."

# 3. perf record: where the samples land
say "syscall_path: perf record"
perf record -q -e cpu-clock -F 4999 -g -o "$VTMP/perf.data" -- "$XS" run -o "$VTMP" --format none -- "$LOOP" "$((SP_N * 2))" >/dev/null 2>"$VTMP/err" ||
  die "syscall_path: perf record failed: $(head -c 300 "$VTMP/err")"
perf report -i "$VTMP/perf.data" --comm getppid_loop --percentage relative --no-children --sort dso,sym --stdio -q -g none 2>/dev/null |
  awk 'NF >= 4 && $1 ~ /%$/ { p = $1; sub(/%/, "", p); dso = $2; sym = $4; for (i = 5; i <= NF; i++) sym = sym " " $i; print p "\t" dso "\t" sym }' >"$VTMP/syms"
[ -s "$VTMP/syms" ] || die "syscall_path: perf report gave nothing"
# parts of the path, by symbol
parts=$(awk -F'\t' '
  function part(dso, sym) {
    if (dso ~ /libexitscope/) return "exitscope (libexitscope.so: stub, trampoline, counting)"
    if (dso !~ /kernel/) return "program and libc (user space)"
    if (sym ~ /fpu|xsave|xrstor|fpstate|fpregs/) return "kernel: FPU state to and from the signal frame (xsave/xrstor)"
    if (sym ~ /sigreturn|restore_sigcontext/) return "kernel: rt_sigreturn, rest"
    if (sym ~ /signal|sigframe|rt_frame|user_dispatch|sig_|send_sig|siginfo|force_sig/) return "kernel: SIGSYS delivery, rest"
    if (sym ~ /getppid|task_pid|pid_nr/) return "kernel: getppid itself"
    return "kernel: entry/exit and the rest"
  }
  { s[part($2, $3)] += $1 }
  END { for (k in s) printf "%.1f\t%s\n", s[k], k }' "$VTMP/syms" | sort -t$'\t' -k1,1gr)

cat <<EOF
## The system-call path: where the time goes

Generated by \`bench/syscall_path.sh\`. A \`getppid\` loop ($SP_N calls, timed inside), $SP_ROUNDS rounds alternating,
ns per call, median (min–max):

| variant | ns per call | step | adds (median) |
|---|---|---|---|
| native (\`sud_floor native\`) | $(range native) | one kernel entry | $m_nat |
| Syscall User Dispatch, empty handler (\`sud_floor empty\`) | $(range empty) | SIGSYS delivery + rt_sigreturn, no real call | $((m_empty - m_nat)) over native |
| the same handler making the real call (\`sud_floor pass\`) | $(range pass) | + the real call from the allowed region | $((m_pass - m_empty)) |
| \`exitscope run --no-fast-path\` (\`getppid_loop\`) | $(range xsnf) | every call trapped: + exitscope's handler (counting, clocks, the runtime's checks) | $(dmed xsnf pass) |
| \`exitscope run\` (\`getppid_loop\`) | $(range xs) | the fast path: the site rewritten, no signal (steps below) | $(dmed xs native) over native |

Exits that took the fast path: under \`exitscope run\` $(fast xs), under \`--no-fast-path\` $(fast xsnf).
\`getppid_loop\` calls through \`syscall(2)\`, whose number is in a register
(\`mov %rdi,%rax ... mov 0x8(%rsp),%r9; syscall\`): the rewriter takes that site too, the
number read at run time.

When every call traps (\`--no-fast-path\`), of exitscope's $((m_xsnf - m_nat)) ns over native per call, the kernel's SIGSYS delivery and sigreturn
(the empty handler's cost over native) are $((m_empty - m_nat)) ns ($(pct $((m_empty - m_nat)) $((m_xsnf - m_nat)))), and exitscope's own handler is $((m_xsnf - m_pass)) ns ($(pct $((m_xsnf - m_pass)) $((m_xsnf - m_nat)))).
With the fast path, exitscope run costs $(dmed xs native) ns over native per call.
The signal frame the kernel writes and reads back holds the FPU/AVX state:
the kernel asks for at least $frame bytes of signal stack (AT_MINSIGSTKSZ) on this CPU.

\`perf stat\` per \`getppid\` call: kernel entries (\`raw_syscalls:sys_enter\`; a call that
Syscall User Dispatch traps is diverted before this tracepoint) natively $e_nat, under
\`--no-fast-path\` $e_xs (the real call and rt_sigreturn), under \`exitscope run\` $e_fp; signals
delivered natively $s_nat, under \`--no-fast-path\` $s_xs (SIGSYS), under \`exitscope run\` $s_fp. So
a trapped call enters the kernel three times instead of once (the trapped call, the real call,
rt_sigreturn); a call through the fast path once. On this VM (a PVM guest with page-table isolation, \`pti=on\`) a round trip into
the kernel is what a native \`getppid\` costs: about $m_nat ns.

$hwnote

\`perf record -e cpu-clock -g\` of \`exitscope run -- getppid_loop $((SP_N * 2))\`, share of the
program thread's samples (comm \`getppid_loop\`) by part of the path:

| part | % of samples |
|---|---|
$(awk -F'\t' '{ printf "| %s | %s |\n", $2, $1 }' <<<"$parts")

Read with the caveat above: \`xs_prog_syscall_insn\` (the runtime's syscall instruction, in the
allowed region) holds the first user instruction after the return from the kernel, so part of
its share is the kernel's exit path; in \`xs_fast_call\` most samples sit right after its two
\`rdtsc\`.

Top symbols:

| % | where | symbol |
|---|---|---|
$(head -12 "$VTMP/syms" | awk -F'\t' '{ printf "| %s | %s | `%s` |\n", $1, $2, $3 }')

### The fast path, step by step

\`bench/fp_floor MODE\` on a call site shaped like glibc's \`getppid\` (\`mov \$110,%eax; syscall; ret\`),
same loop and rounds, ns per call, median (min–max); each step adds to the one above it:

| step | ns per call | adds (median) |
|---|---|---|
| the raw call, dispatch off (\`raw\`) | $(range raw) | – |
| dispatch armed, the call inside the allowed region, no selector (\`region\`) | $(range region) | $(dmed region raw) |
| a trampoline round trip doing nothing: the site's \`mov\` is a \`jmp rel32\` to a trampoline that makes the call from the region and jumps back (\`tramp\`) | $(range tramp) | $(dmed tramp region) |
| the trampoline plus counting: red zone stepped over, argument registers saved, C code (general registers only) before and after the call, counters in thread-local storage (\`count\`) | $(range count) | $(dmed count tramp) |
| plus a TSC read before and after the call (\`count_tsc\`) | $(range count_tsc) | $(dmed count_tsc count) |
| glibc's \`getppid()\`, natively (\`libc\`) | $(range libc) | – |
| the whole fast path: \`exitscope run -- fp_floor libc\` | $(range xs_libc) | $(dmed xs_libc libc) over \`libc\`; fast exits: $(fast xs_libc) |
| the same with \`--no-fast-path\` | $(range xsnf_libc) | $(dmed xsnf_libc libc) over \`libc\`; fast exits: $(fast xsnf_libc) |

The stand-ins run their C code on the program's stack, below the red zone; a fast path in someone
else's process must move to a stack of its own, which they do not price. A difference smaller
than the spread of its rows is noise on this shared VM.
EOF
