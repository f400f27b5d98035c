#!/usr/bin/env bash
# shellcheck disable=SC2016  # single quotes: the inner shell expands
# t950: statically linked programs under exitscope's loader (issue 15).
# Subjects, built here from tests/static/ (the Go server from tests/stacks/goserver,
# the source t800 builds with cgo) or taken from Debian:
#  - st_prog (threads, a handled signal, file I/O, fork + exec of itself
#    through /proc/self/exe) as gcc -static, gcc -static-pie and
#    musl-gcc -static; a Rust program built with +crt-static;
#  - a Go HTTP server with its clients, built with CGO_ENABLED=0, printing
#    os.Executable();
#  - busybox-static applets, several of which re-exec themselves through
#    /proc/self/exe (busybox sh, xargs, env, timeout: seen with strace -f);
#    bash-static running a script, and a script whose #! is bash-static;
#  - exec chains static -> dynamic -> static (busybox sh -> /usr/bin/env ->
#    busybox, busybox sh -> bash-static -> busybox, bash-static -> seq).
# For each: stdout, stderr and status equal the native run's, and the
# per-call counts equal strace -f -c's (lib-strace-agree.py, t300's rule;
# a static program's image has no pre-runtime part to allow). The Go
# server's counts depend on its scheduler (two native runs differ), so for
# it only the call it makes a fixed number of times (getppid) is compared.
# Then: a profile of the Go server opens in perf report with Go's symbols;
# the /proc view of a static program (st_proc); the refusals (setuid and
# setgid static programs, a file that is not ELF); windows by every trigger
# on a static program; the run file of an exec chain names every process.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0
export LC_ALL=C
SRC=$XS_ROOT/tests/static
AGREE=$XS_ROOT/tests/integration/lib-strace-agree.py
B=$SCRATCH/bin; mkdir -p "$B"

for tool in gcc musl-gcc go rustc strace perf jq readelf /bin/busybox /bin/bash-static; do
  if ! command -v "$tool" >/dev/null; then fail "t950 prerequisite $tool"; exit 1; fi
done

# --- the subjects ---
build() { local n=$1; shift; check "t950 build $n" "$@"; }
build st_prog-static gcc -O2 -static -pthread -o "$B/st_prog-static" "$SRC/st_prog.c"
build st_prog-static-pie gcc -O2 -static-pie -pthread -o "$B/st_prog-static-pie" "$SRC/st_prog.c"
build st_prog-musl musl-gcc -O2 -static -o "$B/st_prog-musl" "$SRC/st_prog.c"
build st_proc-static gcc -O2 -static -o "$B/st_proc-static" "$SRC/st_proc.c"
build st_proc-static-pie gcc -O2 -static-pie -o "$B/st_proc-static-pie" "$SRC/st_proc.c"
build st_proc-musl musl-gcc -O2 -static -o "$B/st_proc-musl" "$SRC/st_proc.c"
build st_proc-dynamic gcc -O2 -o "$B/st_proc-dynamic" "$SRC/st_proc.c"
build rust_static rustc -O -C target-feature=+crt-static -o "$B/rust_static" "$SRC/rust_static.rs"
export GOCACHE=$SCRATCH/gocache GOPATH=$SCRATCH/gopath GOFLAGS=-mod=mod GO111MODULE=on
build gostatic sh -c "cd '$XS_ROOT/tests/stacks/goserver' && CGO_ENABLED=0 go build -o '$B/gostatic' ."
# static: no PT_INTERP (readelf prints no interpreter line) and, for the
# ones that should be, of type EXEC (fixed addresses) or DYN (static-pie)
statictype() { readelf -lh "$1" 2>/dev/null | awk '/Requesting program interpreter/ { i = 1 } /^  Type:/ { t = $2 } END { print (i ? "dynamic" : "static") " " t }'; }
for s in st_prog-static:EXEC st_prog-static-pie:DYN st_prog-musl:EXEC st_proc-static:EXEC \
  st_proc-static-pie:DYN st_proc-musl:EXEC rust_static:any gostatic:EXEC busybox:EXEC bash-static:EXEC; do
  n=${s%%:*} want=${s#*:}
  f=$B/$n; [ -e "$f" ] || f=/bin/$n
  got=$(statictype "$f")
  [ "$want" = any ] && want=${got#static }
  expect_eq "t950 $n is statically linked ($want)" "static $want" "$got"
done

# in_dir DIR CMD...: CMD run in DIR (made), stdin from /dev/null
in_dir() { local d=$1; shift; mkdir -p "$d"; (cd "$d" && timeout -s KILL 120 "$@" </dev/null); }

# compare NAME CMD...: CMD natively, under strace -f -C (the counts), under
# exitscope, and under strace -f -i around exitscope (to cut each dynamic
# image's pre-runtime start-up, as in t300), each in its own directory;
# stdout, stderr and status of the exitscope run equal the native run's,
# and the counts agree (lib-strace-agree.py). COMPARE_COUNTS=no: only
# output and status.
compare() {
  local name=$1; shift
  local dir=$SCRATCH/cmp-$name
  mkdir -p "$dir/records" "$dir/records-traced"
  in_dir "$dir/native" "$@" >"$dir/native.out" 2>"$dir/native.err"; echo $? >"$dir/native.status"
  in_dir "$dir/xs" "$XS" run -o "$dir/records" --log "$dir/xs.log" -- "$@" >"$dir/xs.out" 2>"$dir/xs.err"; echo $? >"$dir/xs.status"
  local diffs=() f
  [ "$(cat "$dir/native.status")" = "$(cat "$dir/xs.status")" ] ||
    diffs+=("exit status: native $(cat "$dir/native.status"), exitscope $(cat "$dir/xs.status")")
  for f in out err; do
    cmp -s "$dir/native.$f" "$dir/xs.$f" || diffs+=("std$f differs:" "$(diff "$dir/native.$f" "$dir/xs.$f" | head -n 8)")
  done
  if [ "${#diffs[@]}" -eq 0 ]; then
    ok "t950 $name: same output and status as natively ($(cat "$dir/native.status"))"
  else
    fail "t950 $name: same output and status as natively" "${diffs[@]}"
  fi
  [ "${COMPARE_COUNTS:-yes}" = yes ] || return 0
  # stdout and stderr to files as in the exitscope run: stdio asks a
  # character device (/dev/null) whether it is a terminal, a file not
  in_dir "$dir/strace" strace -f -C -U name,calls,errors -o "$dir/native.strace" -- "$@" >"$dir/strace.out" 2>"$dir/strace.err"
  in_dir "$dir/traced" strace -f -i -o "$dir/xs.trace" -- "$XS" run -o "$dir/records-traced" --log "$dir/xs-traced.log" -- "$@" >"$dir/traced.out" 2>"$dir/traced.err"
  if /usr/bin/python3 "$AGREE" check "$name" "$dir" >"$dir/check.out" 2>&1; then
    ok "t950 $name: per-call counts agree with strace -f -c"
    grep '^#' "$dir/check.out"
  else
    local lines=(); mapfile -t lines <"$dir/check.out"
    fail "t950 $name: per-call counts agree with strace -f -c" "${lines[@]}"
  fi
}

# --- C, musl, Rust ---
for v in static static-pie musl; do compare "st_prog-$v" "$B/st_prog-$v"; done
# glibc's malloc makes an arena per thread that races for one (more or
# fewer mmap/munmap from run to run): one arena keeps Rust's counts fixed
GLIBC_TUNABLES=glibc.malloc.arena_max=1 compare rust_static "$B/rust_static"

# --- busybox, bash-static, exec chains ---
cat >"$SCRATCH/chain.sh" <<'EOF'
echo a b c | busybox xargs busybox echo
busybox env X=1 busybox sh -c 'echo X=$X'
busybox timeout 5 busybox true && echo timeout-true
/bin/ls -d /
/usr/bin/env /bin/busybox echo static-from-dynamic
/bin/bash-static -c 'busybox echo from-bash-static; /bin/busybox true; exit 3'
echo bash-static said $?
cat /dev/null
busybox wc -c /proc/self/cmdline
EOF
# (one child at a time: in a pipeline the shell's SIGCHLDs merge or not,
# and native runs alone made 3 or 4 rt_sigreturn)
compare busybox-applets /bin/busybox sh -c 'busybox echo hi >f1; busybox tr a-z A-Z <f1; busybox seq 3 >f2; busybox xargs echo <f2; busybox find /proc/self/ -maxdepth 0'
compare busybox-chain /bin/busybox sh "$SCRATCH/chain.sh"
cat >"$SCRATCH/script.sh" <<'EOF'
#!/bin/bash-static
# builtins, a loop, arithmetic, a file written and read back, a command
# substitution running a static child, a dynamic child (seq)
set -e
sum=0
for i in $(seq 1 200); do sum=$((sum + i)); done
for ((i = 0; i < 50; i++)); do printf '%03d\n' "$i"; done >bash.tmp
lines=0
while read -r line; do lines=$((lines + 1)); last=$line; done <bash.tmp
rm -f bash.tmp
words=$(echo one two three | /bin/busybox wc -w)
echo "sum $sum lines $lines last $last words $words args $# $*"
exit 5
EOF
chmod 755 "$SCRATCH/script.sh"
compare bash-static-script /bin/bash-static "$SCRATCH/script.sh" a b
compare bash-static-shebang "$SCRATCH/script.sh" c

# The run file of the chain: every process has a start (or exec) event
# with its executable, an end event and a record file; as many processes
# as strace -f saw natively; the executables are the programs' (a static
# program's, not the loader's). A vfork child that ends without exec (busybox
# timeout's, which forks the watcher) has a start event without exe and argv,
# as the runtime writes it for any program (src/runtime/run.c).
dir=$SCRATCH/cmp-busybox-chain
runs=("$dir"/records/run-*.jsonl)
run=${runs[0]}
if [ -f "$run" ]; then
  problems=$(jq -rs '
    (map(select(.event == "start" or .event == "exec")) | group_by(.pid) | map(.[0].pid)) as $born
    | (map(select(.event == "end")) | map(.pid)) as $ended
    | (map(.pid) | unique) as $all
    | [$all[] | select(. as $p | $born | index($p) | not) | "pid \(.) has no start or exec event"]
      + [$all[] | select(. as $p | $ended | index($p) | not) | "pid \(.) has no end event"]
      + [.[] | select((.event == "start" or .event == "exec") and (.vfork != true) and ((.exe // "") | test("exitscope-ld|^$"))) | "pid \(.pid): \(tojson)"]
    | .[]' "$run" 2>&1)
  for p in $(jq -r '.pid' "$run" | sort -u); do
    [ -s "$dir/records/exitscope-$p.jsonl" ] || problems+=$'\n'"pid $p has no record file"
  done
  expect_eq "t950 busybox-chain: the run file has a start/exec and an end event for every process, each with a record file" "" "$problems"
  nat=$(grep -oE '^[0-9]+' "$dir/native.strace" | sort -u | wc -l)
  xs=$(jq -r '.pid' "$run" | sort -u | wc -l)
  expect_eq "t950 busybox-chain: processes in the run file = processes strace -f saw natively" "$nat" "$xs"
  expect_eq "t950 busybox-chain: the executables in the run file" \
    "/usr/bin/bash-static /usr/bin/busybox /usr/bin/env /usr/bin/ls" \
    "$(jq -r 'select((.event == "start" or .event == "exec") and .vfork != true) | .exe' "$run" | sort -u | tr '\n' ' ' | sed 's/ $//')"
else
  fail "t950 busybox-chain: the run file has a start/exec and an end event for every process, each with a record file" \
    "no run-*.jsonl in $dir/records (exitscope status $(cat "$dir/xs.status"): $(head -c 300 "$dir/xs.err"))"
fi

# --- the static Go server ---
COMPARE_COUNTS=no compare gostatic "$B/gostatic"
check "t950 gostatic: os.Executable() names the program" grep -qx "executable: $B/gostatic <nil>" "$SCRATCH/cmp-gostatic/xs.out"
dir=$SCRATCH/go-counts; mkdir -p "$dir/records"
in_dir "$dir" strace -f -C -U name,calls,errors -o "$dir/native.strace" -- "$B/gostatic" >/dev/null 2>&1
in_dir "$dir" "$XS" run -o "$dir/records" --format none -- "$B/gostatic" >/dev/null 2>&1
nat=$(awk '$1 == "getppid" { print $2 }' "$dir/native.strace")
xs=$(cat "$dir"/records/exitscope-*.jsonl 2>/dev/null | jq -s '[.[].window.syscalls.getppid.calls // 0] | add')
expect_eq "t950 gostatic: getppid calls, exitscope = strace -f -c (1000)" "1000 1000" "$nat $xs"

# A profile of the Go server: its windows' perf.data open in perf report
# with Go's symbols, and perf script reads them. -g fp: Go keeps frame
# pointers and has no .eh_frame for -g dwarf's unwinder, so the call chains
# (net/http's server and client frames above the leaf functions) come from
# frame pointers; perf report --children lists every function on a chain.
dir=$SCRATCH/go-profile; mkdir -p "$dir"
in_dir "$dir" "$XS" run -p -g fp -o "$dir" --format none -- "$B/gostatic" 4 >"$dir/out" 2>"$dir/err"; st=$?
data=$(ls "$dir"/exitscope-*-*.data 2>/dev/null)
syms=
for f in $data; do perf report --stdio --children -g none --sort sym -i "$f" 2>/dev/null; done >"$dir/report"
for pat in 'main\.' 'runtime\.' 'net/http\.'; do grep -q "$pat" "$dir/report" && syms="$syms $pat"; done
expect_eq "t950 gostatic -p: perf report shows main.*, runtime.* and net/http.* (status $st, files: $(echo "$data" | wc -w))" \
  ' main\. runtime\. net/http\.' "$syms"
bad=
for f in $data; do perf script -i "$f" >/dev/null 2>"$dir/script.err" || bad="$bad $(basename "$f"): $(head -c 200 "$dir/script.err")"; done
n=$(for f in $data; do perf script -i "$f" 2>/dev/null; done | grep -c ' main\.[a-zA-Z]')
if [ -n "$data" ] && [ -z "$bad" ] && [ "$n" -gt 0 ]; then ok "t950 gostatic -p: perf script reads every window ($n frames in main.*)"
else fail "t950 gostatic -p: perf script reads every window" "files: ${data:-none}" "errors: ${bad:-none}" "frames in main.*: $n" "$(head -c 300 "$dir/err")"; fi

# --- the /proc view of a static program ---
# A fixed environment (env -i), so that the native environ and the
# program's under exitscope can be compared line by line. The same program
# linked dynamically (preloaded, not loaded) for comparison: its environ
# too shows no LD_PRELOAD or exitscope variable (runtime.c environ_view).
for v in static static-pie musl dynamic; do
  d=$SCRATCH/proc-$v; mkdir -p "$d"
  (cd "$d" && env -i PATH=/usr/bin:/bin T950=yes "$B/st_proc-$v" arg1 'arg two' >native 2>&1)
  (cd "$d" && env -i PATH=/usr/bin:/bin T950=yes "$XS" run -o "$d" --format none -- "$B/st_proc-$v" arg1 'arg two' >xs 2>&1)
  for key in cmdline comm environ environ-exitscope-variables environ-libc-count auxv-proc-equals-stack \
    auxv-phdr-is-program auxv-entry-is-program auxv-phnum auxv-phent auxv-base auxv-execfn auxv-addresses \
    exe thread-self-exe pid-exe argv0; do
    want=$(grep "^$key " "$d/native" | paste -sd '|'); got=$(grep "^$key " "$d/xs" | paste -sd '|')
    case $key in
      auxv-addresses) [ "$v" = static-pie ] || [ "$v" = dynamic ] && continue ;;   # PIE: placed by ASLR / the loader
      # dynamic: ld.so's base is random; the environment array's freed
      # slots are zeroed, so the stack past its NULL is not the auxv
      # (DESIGN.md §4.5)
      auxv-base|auxv-proc-equals-stack) [ "$v" = dynamic ] && continue ;;
    esac
    if [ -z "$want" ]; then fail "t950 /proc view $v: $key" "the native run printed no $key line"; continue; fi
    expect_eq "t950 /proc view $v: $key as natively" "$want" "$got"
  done
  # comm: the kernel keeps 15 bytes of the name
  n=st_proc-$v
  [ "$v" = dynamic ] && continue
  expect_eq "t950 /proc view $v: natively, the expected values (sanity)" \
    "comm ${n:0:15}|auxv-proc-equals-stack yes|auxv-base 0|exe $B/$n" \
    "$(grep -E '^(comm|auxv-base|exe|auxv-proc-equals-stack) ' "$d/native" | paste -sd '|')"
done

# --- refusals ---
# refused NAME STATUS PATTERN ARGS...: exitscope run refuses with STATUS and
# one line matching PATTERN, and runs nothing
refused() {
  local name=$1 want=$2 pattern=$3; shift 3
  "$XS" run -o "$SCRATCH" --format none -- "$@" >"$SCRATCH/r.out" 2>"$SCRATCH/r.err"; local st=$?
  if [ "$st" = "$want" ] && [ "$(wc -l <"$SCRATCH/r.err")" = 1 ] && grep -Eq "$pattern" "$SCRATCH/r.err" && [ ! -s "$SCRATCH/r.out" ]; then
    ok "t950 refuses $name ($want)"
  else
    fail "t950 refuses $name ($want)" "status $st" "stderr: $(head -c 300 "$SCRATCH/r.err")" "stdout: $(head -c 200 "$SCRATCH/r.out")"
  fi
}
cp "$B/st_prog-static" "$SCRATCH/suid"; chmod 4755 "$SCRATCH/suid"
refused "a setuid static program" 122 "'.*/suid' is setuid/setgid" "$SCRATCH/suid"
cp "$B/st_prog-static-pie" "$SCRATCH/sgid"; chmod 2755 "$SCRATCH/sgid"
refused "a setgid static-pie program" 122 "'.*/sgid' is setuid/setgid" "$SCRATCH/sgid"
head -c 4096 /dev/urandom | tr -d '#' >"$SCRATCH/noelf"; printf '\177ELX' | dd of="$SCRATCH/noelf" conv=notrunc 2>/dev/null
chmod 755 "$SCRATCH/noelf"
refused "a file that is not ELF" 126 "not an ELF executable or script" "$SCRATCH/noelf"

# An exec, from a program under exitscope, of a static ELF the kernel itself
# refuses (ENOEXEC): program headers cut short, an ET_REL type. The caller's
# execve fails as natively (it went to exitscope-ld, which refused after a
# successful exec: status 126).
head -c 100 "$B/st_prog-static" >"$SCRATCH/cut"
cp "$B/st_prog-static" "$SCRATCH/rel"; printf '\001' | dd of="$SCRATCH/rel" bs=1 seek=16 conv=notrunc 2>/dev/null
chmod 755 "$SCRATCH/cut" "$SCRATCH/rel"
for f in cut rel; do
  py="import os
try: os.execv('$SCRATCH/$f', ['$f'])
except OSError as e: print('execve errno', e.errno)"
  want=$(/usr/bin/python3 -c "$py" 2>&1); got=$("$XS" run -o "$SCRATCH" --format none -- /usr/bin/python3 -c "$py" 2>&1)
  expect_eq "t950 exec of a static ELF the kernel refuses ($f): natively ENOEXEC (sanity)" "execve errno 8" "$want"
  expect_eq "t950 exec of a static ELF the kernel refuses ($f): execve fails as natively" "$want" "$got"
done
# ... while one with more than a page of program headers (80, which the
# kernel runs) still goes to exitscope-ld: its exit is on record
/usr/bin/python3 - "$SCRATCH/many" <<'PY'
import struct, sys
n, base, code = 80, 0x400000, bytes([0xb8, 60, 0, 0, 0, 0xbf, 7, 0, 0, 0, 0x0f, 0x05])  # exit(7)
off = 64 + n * 56
eh = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8) + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, base + off, 64, 0, 0, 64, 56, n, 64, 0, 0)
ph = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, off + len(code), off + len(code), 0x1000) + bytes(56 * (n - 1))
open(sys.argv[1], "wb").write(eh + ph + code)
PY
chmod 755 "$SCRATCH/many"
mkdir -p "$SCRATCH/many-out"
"$XS" run -o "$SCRATCH/many-out" --format none -- /usr/bin/python3 -c "import os; os.execv('$SCRATCH/many', ['many'])"
st=$?
expect_eq "t950 exec of a static ELF with 80 program headers: its status (7) and its end on record" "7 exec:many end:many" \
  "$st $(jq -r '"\(.event):\(.comm)"' "$SCRATCH"/many-out/run-*.jsonl 2>&1 | tail -n 2 | paste -sd ' ')"

# --- windows by every trigger on a static program ---
# st_prog-static wait FILE idles until FILE exists: kill -USR1, exitscope
# dump, --interval; then busybox sh writes to /dev/exitscope.
d=$SCRATCH/windows; mkdir -p "$d"
(cd "$d" && exec "$XS" run -o "$d" --format none --interval 300 -- "$B/st_prog-static" wait "$d/stop" >"$d/out" 2>"$d/err") &
xs_pid=$!
file=$d/exitscope-$xs_pid.jsonl
if wait_for "$file" '"reason": *"interval"' 10; then ok "t950 windows: --interval closes windows of a static program"
else fail "t950 windows: --interval closes windows of a static program" "$(head -c 300 "$d/err")"; fi
kill -USR1 "$xs_pid" 2>/dev/null
if wait_for "$file" '"reason": *"signal"' 10; then ok "t950 windows: kill -USR1 closes a window of a static program"
else fail "t950 windows: kill -USR1 closes a window of a static program" "$(head -c 300 "$d/err")"; fi
"$XS" dump "$xs_pid" from-dump >"$d/dump.out" 2>"$d/dump.err"; st=$?
if [ "$st" = 0 ] && grep -q '"label": *"from-dump"' "$file" 2>/dev/null; then ok "t950 windows: exitscope dump PID closes a window of a static program"
else fail "t950 windows: exitscope dump PID closes a window of a static program" "status $st: $(head -c 300 "$d/dump.err")"; fi
touch "$d/stop"; wait "$xs_pid"; st=$?
expect_eq "t950 windows: the static program ends as natively, its last record is its exit" "0 waited: yes exit" \
  "$st $(cat "$d/out") $(tail -n 1 "$file" 2>/dev/null | jq -r .reason)"
mkdir -p "$d/devfile"
# (we are root: a write that missed the emulation would create /dev/exitscope)
had_devfile=no; [ -e /dev/exitscope ] && had_devfile=yes
got=$(cd "$d" && "$XS" run -o "$d/devfile" --format none -- /bin/busybox sh -c 'echo "dump from-busybox" > /dev/exitscope; echo done' 2>&1; echo "st=$?")
made=no
if [ "$had_devfile" = no ] && [ -e /dev/exitscope ]; then made=yes; rm -f /dev/exitscope; fi
expect_eq "t950 windows: busybox sh's echo > /dev/exitscope goes to exitscope, not the file system" "done st=0 created=no" \
  "$(tr '\n' ' ' <<<"$got")created=$made"
expect_eq "t950 windows: ... and closes a window with its label" "app:from-busybox exit:-" \
  "$(jq -r '"\(.reason):\(.label // "-")"' "$d"/devfile/exitscope-*.jsonl 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
