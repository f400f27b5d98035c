#!/usr/bin/env bash
# t300: exitscope agrees with strace, call by call, on real programs, and the
# programs' output is the same with and without exitscope.
#
# For each workload the same command runs three times, each in a fresh copy of
# the same input directory:
#   (a) native     strace -f -C -U name,calls,errors -o native.strace -- CMD
#   (b) exitscope  build/exitscope run -o records --log xs.log -- CMD
#                  (--log: the stats block would otherwise go to the program's
#                  stderr, which is compared with the native run's)
#   (c) traced     strace -f -i -o xs.trace -- build/exitscope run -o DIR --log FILE -- CMD
# (a) gives the true counts (strace on the bare program: no SIGSYS, no re-issued
# calls, no extra rt_sigreturn — none of strace's artefacts under exitscope);
# -C prints the trace as well as the table, for exit_group and exit.
# (b) gives exitscope's counts: .window.syscalls summed over every record of
# every exitscope-<pid>.jsonl. (c) is used for one thing only: to find, in each
# program image, the calls made before the runtime switched Syscall User
# Dispatch on (from the execve to the prctl), which no preloaded runtime can see.
#
# Expected differences, strace(a) - exitscope(b), per call name, for calls and
# errors alike (named as in lib-strace-agree.py; nothing else is allowed):
#
#   name                 per             value                       reason
#   INITIAL_EXECVE       run             execve 1                    the CLI execs the program before any
#                                                                    runtime exists; later execs trap
#   LOADER_PRE_RUNTIME   program image   the longest prefix of the   the loader maps the program and its
#                        (first image,   image's calls in (a) all    libraries, libc starts up, earlier
#                        every exec'd    found (as a multiset) in    constructors run: all before the
#                        image)          (c) before the runtime's    runtime's constructor
#                                        dispatch-on prctl
#   STRACE_NEVER_RETURNS (a)'s table     exit_group, exit counted    strace -c counts a call when it
#                                        from (a)'s trace lines      returns; these two never return
#
# Not allowed (printed as "preload footprint"): what (c) does before dispatch-on
# beyond the native prefix — loading libexitscope.so, the runtime's start-up,
# the loader's own bookkeeping growing by a page (seen with python3).
# No SIGSYS / rt_sigreturn / re-issued-call artefacts need allowing: (a) traces
# the program natively, and (c) is only used to cut the start-up.
#
# Typical LOADER_PRE_RUNTIME on this machine for /bin/true (libc only):
# access 1/1err (ld.so.preload), arch_prctl 1, brk 1, close 2, mmap 8,
# mprotect 3, munmap 1, newfstatat 2, openat 2, pread64 2, prlimit64 1, read 1,
# rseq 1, set_robust_list 1, set_tid_address 1 — i.e. everything /bin/true does
# natively but execve and exit_group; /bin/true is the first workload, so its
# check is the baseline: exitscope must count exactly exit_group 1 there. A
# program with more libraries has more openat/read/pread64/newfstatat/mmap/
# mprotect/close, which is why the loader's share is measured per image rather
# than copied from /bin/true.
. "$(dirname "$0")/../lib.sh"

AGREE=$XS_ROOT/tests/integration/lib-strace-agree.py
RUN_TIMEOUT=300
export LC_ALL=C HOME=$SCRATCH/home
mkdir -p "$HOME"

for tool in strace /usr/bin/python3 /usr/bin/sqlite3 /usr/bin/gzip /usr/bin/sort /usr/bin/cp /bin/sh; do
  if ! command -v "$tool" >/dev/null; then fail "t300 prerequisite $tool"; exit 1; fi
done
if [ ! -x "$XS" ] || [ ! -f "$XS_BUILD/lib/libexitscope.so" ]; then
  fail "t300 build present" "missing $XS or $XS_BUILD/lib/libexitscope.so (run make)"
  exit 1
fi

# Inputs, made once and copied into every run directory.
INPUT=$SCRATCH/input
mkdir -p "$INPUT"
/usr/bin/python3 - "$INPUT" <<'EOF'
import random, sys
d = sys.argv[1]
random.seed(300)
with open(f"{d}/input.txt", "w") as f:
    f.write("".join("%08d %s\n" % (random.randrange(10**8), "x" * random.randrange(40))
                    for _ in range(20000)))
with open(f"{d}/input.bin", "wb") as f:
    f.write(bytes(random.randrange(256) if i % 7 == 0 else 65 for i in range(2_000_000)))
EOF
cat >"$INPUT/script.sql" <<'EOF'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
BEGIN;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<5000)
  INSERT INTO t SELECT x, printf('row%d', x*7919 % 10007) FROM c;
COMMIT;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(a), min(b), max(b) FROM t;
SELECT b FROM t ORDER BY b LIMIT 5;
EOF
: >"$INPUT/empty"

# Workloads: NAME|STDIN|FILES-TO-COMPARE (besides stdout, stderr, status)|CMD...
PY_CODE='import hashlib, json; d = open("input.bin", "rb").read(); print(json.dumps({"sha256": hashlib.sha256(d).hexdigest(), "size": len(d), "sorted": sorted(d[:64])}))'
SH_CODE='/usr/bin/sort --parallel=1 -o s2.txt input.txt; exec /usr/bin/cp input.bin c2.bin'
workloads=(
  "true|empty||/bin/true"
  "sqlite3|script.sql|t.db|/usr/bin/sqlite3 -batch t.db"
  "gzip|empty||/usr/bin/gzip -9 -c input.bin"
  "python3|empty||/usr/bin/python3 -I -B -c PY_CODE"
  "sort|empty|sorted.txt|/usr/bin/sort --parallel=1 -o sorted.txt input.txt"
  "cp|empty|copy.bin|/usr/bin/cp input.bin copy.bin"
  "sh-vfork-exec|empty|s2.txt c2.bin|/bin/sh -c SH_CODE"
)

# run_mode DIR MODE STDIN CMD...: run CMD in a fresh copy of the inputs in
# DIR/MODE, stdout and stderr captured there, status in DIR/MODE.status.
run_mode() {
  local dir=$1 mode=$2 stdin=$3; shift 3
  local wrap=()
  case $mode in
    native)    wrap=(strace -f -C -U name,calls,errors -o "$dir/native.strace" --) ;;
    exitscope) wrap=("$XS" run -o "$dir/records" --log "$dir/xs.log" --) ;;
    traced)    wrap=(strace -f -i -o "$dir/xs.trace" -- "$XS" run -o "$dir/records-traced" --log "$dir/xs-traced.log" --) ;;
  esac
  mkdir -p "$dir/$mode" "$dir/records" "$dir/records-traced"
  cp -p "$INPUT"/* "$dir/$mode/"   # -p: gzip stores the mtime
  (cd "$dir/$mode" && timeout "$RUN_TIMEOUT" "${wrap[@]}" "$@" <"$stdin" >stdout.out 2>stderr.out)
  echo $? >"$dir/$mode.status"
}

# report NAME STATUS OUTPUT-FILE: ok/not ok with the helper's output as details.
report() {
  local lines=()
  mapfile -t lines <"$3"
  if [ "$2" -eq 0 ]; then
    ok "$1"
    printf '%s\n' "${lines[@]}" | grep '^#' || true
  else
    fail "$1" "${lines[@]}"
  fi
}

for w in "${workloads[@]}"; do
  IFS='|' read -r name stdin products cmdline <<<"$w"
  read -r -a cmd <<<"$cmdline"
  for i in "${!cmd[@]}"; do
    case ${cmd[$i]} in PY_CODE) cmd[i]=$PY_CODE ;; SH_CODE) cmd[i]=$SH_CODE ;; esac
  done
  dir=$SCRATCH/$name
  for mode in native exitscope traced; do run_mode "$dir" "$mode" "$stdin" "${cmd[@]}"; done

  # The program behaves the same: status, stdout, stderr and the files it writes.
  diffs=()
  [ "$(cat "$dir/native.status")" = "$(cat "$dir/exitscope.status")" ] ||
    diffs+=("exit status: native $(cat "$dir/native.status"), exitscope $(cat "$dir/exitscope.status")")
  for f in stdout.out stderr.out $products; do
    cmp -s "$dir/native/$f" "$dir/exitscope/$f" ||
      diffs+=("$f differs: $(cmp "$dir/native/$f" "$dir/exitscope/$f" 2>&1 | head -n 1)")
  done
  [ "$(cat "$dir/native.status")" = 0 ] || diffs+=("native run failed with status $(cat "$dir/native.status")")
  if [ "${#diffs[@]}" -eq 0 ]; then
    ok "t300 $name: same output and status with and without exitscope"
  else
    fail "t300 $name: same output and status with and without exitscope" "${diffs[@]}" \
      "exitscope stderr: $(head -c 500 "$dir/exitscope/stderr.out")"
  fi

  # One measurement, which must agree. (strace splits a call into
  # "<unfinished ...>" and "<... resumed>" halves whenever another tracee's line
  # comes in between, e.g. the vfork parent of sh-vfork-exec resuming while its
  # child starts up; lib-strace-agree.py joins the halves before reading a call,
  # so the reading does not depend on how the tracees interleaved.)
  /usr/bin/python3 "$AGREE" check "$name" "$dir" >"$dir/check.out" 2>&1
  report "t300 $name: per-call counts agree with strace" $? "$dir/check.out"
done
