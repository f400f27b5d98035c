#!/usr/bin/env bash
# t610: the control socket against hostile neighbours and programs
# (hardening items 3, 6, 9, 13).
#  - squatting: another user binds "@exitscope-PID" (and a name of the
#    runtime's own form, "@exitscope-PID-<16 hex>") before PID starts; the
#    runtime must still be reachable and `exitscope dump PID` must talk to
#    it, never to the impostor, whose answer carries terminal escapes; for
#    a process without exitscope the command refuses the impostor, names
#    it, and prints none of its bytes;
#  - a runtime without a control socket (no descriptor left at start) says
#    why on its log, and `exitscope dump` says the process has none and
#    names the other ways;
#  - a program that holds every descriptor (EMFILE): idle connections make
#    no CPU spin, the control signal still closes a window, dump works;
#  - 20 idle connections delay a dump by nothing (a silent client may not
#    block the others);
#  - dump does not depend on --format (none prints the text block), and
#    dump --json prints the record line;
#  - after a root program drops to nobody, dump works as root and as nobody.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0

HOSTILE=xs-hostile-c
id "$HOSTILE" >/dev/null 2>&1 || useradd -M -r -s /usr/sbin/nologin "$HOSTILE"
PY=/usr/bin/python3	# the system's: the other user cannot reach a per-user install

# Programs run as another user need a directory everyone can read (see t120).
shared=$(mktemp -d "${TMPDIR:-/tmp}/xs-t610.XXXXXX")
children=()
cleanup() {
  local p
  for p in "${children[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$SCRATCH" "$shared"
}
trap cleanup EXIT
chmod 755 "$shared"; mkdir -p "$shared/bin/lib" "$shared/rw"; chmod 1777 "$shared/rw"
cp "$XS" "$shared/bin/exitscope"; cp "$XS_BUILD/lib/libexitscope.so" "$shared/bin/lib/"
cp "$T/th_ctl_drop" "$shared/bin/"

# impostor.py READYFILE PID NAME...: bind each abstract NAME, then answer
# every connection with a fake answer full of terminal escapes.
cat >"$shared/bin/impostor.py" <<'EOF'
import os, select, socket, sys
ready, pid, names = sys.argv[1], sys.argv[2], sys.argv[3:]
socks = []
for n in names:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + n)
    s.listen(64)
    socks.append(s)
payload = ("\x1b]0;owned\x07\x1b[31mHACKED\x1b[0m\x9b2J\n----- exitscope stats for process %s "
           "(window #0, command, 0.001 s) -----\nok window 0\n" % pid).encode("latin-1")
with open(ready, "w") as f:
    f.write("bound\n")
while True:
    r, _, _ = select.select(socks, [], [])
    for s in r:
        c, _ = s.accept()
        try:
            c.sendall(payload)
        except OSError:
            pass
        c.close()
EOF
# idle.py PID COUNT READYFILE: open COUNT connections to PID's runtime (its
# listener's pid checked) that never send anything, then wait.
cat >"$shared/bin/idle.py" <<'EOF'
import re, socket, struct, sys, time
pid, count, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pat = re.compile(r"^@exitscope-%s(-[0-9a-f]{16})?$" % pid)
names = [l.split()[-1] for l in open("/proc/net/unix") if pat.match(l.split()[-1])]
conns = []
for n in names:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0" + n[1:])
    if struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0] == int(pid):
        conns.append(s)
        while len(conns) < count:
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect("\0" + n[1:])
            conns.append(c)
        break
with open(ready, "w") as f:
    f.write("connected %d\n" % len(conns))
time.sleep(600)
EOF
chmod -R a+rX "$shared/bin"

expect_val() {
  if [ -z "$3" ]; then fail "$1" "expected: $2" "actual:   (no value: missing file, record or field)"
  else expect_eq "$@"; fi
}
recs() { [ -n "$1" ] && [ -s "$1" ] && jq -sc "$2" "$1" 2>/dev/null; }
as_hostile() { setpriv --reuid="$HOSTILE" --regid="$HOSTILE" --clear-groups "$@"; }
# no_escapes NAME FILE...: ok when no FILE holds ESC, BEL, CSI (0x9b) or
# the impostor's word.
no_escapes() {
  local n=$1; shift
  if LC_ALL=C grep -q -e $'\x1b' -e $'\x07' -e $'\x9b' -e HACKED "$@"; then
    fail "$n" "$(LC_ALL=C cat -v "$@" | head -c 600)"
  else ok "$n"; fi
}
# stop_target: make the program finish (it waits for $dir.stop) and reap it.
stop_target() {
  local i
  touch "$dir.stop"
  for ((i = 0; i < 500; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
ms() { echo $(( $(date +%s%N) / 1000000 )); }

# ---------------------------------------------------------------------------
# Squatting: the impostor binds the target's names before it starts.
name=squat dir="$SCRATCH/$name"
mkdir -p "$dir"
mkfifo "$dir.go"
# the pid is known in advance: this shell waits, then execs exitscope run
bash -c 'read -r _ <"$1"; exec "$2" run -o "$3" -- "$4" plain "$5"' _ "$dir.go" "$XS" "$dir" "$T/tw_idle" "$dir.stop" \
  >"$dir.stdout" 2>"$dir.stderr" </dev/null &
pid=$! file="$dir/exitscope-$pid.jsonl"
children+=("$pid")
as_hostile "$PY" "$shared/bin/impostor.py" "$shared/rw/$name.bound" "$pid" "exitscope-$pid" "exitscope-$pid-0123456789abcdef" \
  >"$dir.impostor" 2>&1 &
ipid=$!; children+=("$ipid")
if wait_for "$shared/rw/$name.bound" bound; then ok "$name: the impostor (uid $HOSTILE) holds the names before the target starts"
else fail "$name: the impostor (uid $HOSTILE) holds the names before the target starts" "$(cat "$dir.impostor")"; fi
echo go >"$dir.go"
wait_for "$dir.stdout" '^ready' || fail "$name: the program started" "$(cat "$dir.stderr")"
if grep -q 'cannot open the control socket' "$dir.stderr"; then
  fail "$name: the runtime gets its control socket all the same" "$(cat "$dir.stderr")"
else ok "$name: the runtime gets its control socket all the same"; fi
timeout 20 "$XS" dump "$pid" real >"$dir.dump" 2>"$dir.dump.err"
expect_val "$name: dump exit status" 0 "$?"
check "$name: dump prints the runtime's block" \
  grep -q "^----- exitscope stats for process $pid (window #0, command, label \"real\"" "$dir.dump"
no_escapes "$name: nothing of the impostor's answer is printed" "$dir.dump" "$dir.dump.err"
expect_val "$name: the runtime wrote the record" '[["command","real"]]' "$(recs "$file" '[.[] | [.reason, .label]]')"
timeout 20 "$XS" reset "$pid" >"$dir.reset" 2>&1
expect_val "$name: reset exit status" 0 "$?"
expect_val "$name: reset reached the runtime" '[["command","real"],["command",null]]' \
  "$(recs "$file" '[.[] | [.reason, .label]]')"
stop_target
kill "$ipid" 2>/dev/null; wait "$ipid" 2>/dev/null

# An impostor for a process without exitscope: refused, not printed.
name=squat-no-runtime dir="$SCRATCH/$name"
sleep 60 &
pid=$!; children+=("$pid")
as_hostile "$PY" "$shared/bin/impostor.py" "$shared/rw/$name.bound" "$pid" "exitscope-$pid" "exitscope-$pid-fedcba9876543210" \
  >"$dir.impostor" 2>&1 &
ipid=$!; children+=("$ipid")
wait_for "$shared/rw/$name.bound" bound || fail "$name: the impostor is up" "$(cat "$dir.impostor")"
for cmd in dump reset; do
  timeout 20 "$XS" $cmd "$pid" >"$dir.$cmd" 2>"$dir.$cmd.err"
  st=$?
  check "$name: $cmd refuses (status $st)" test "$st" -eq 1
  check "$name: $cmd says whose socket it is" \
    grep -q "refusing the control socket '@exitscope-$pid.*': it is held by process $ipid\|refusing the control socket '@exitscope-$pid.*': it is held by process [0-9]* (uid $(id -u "$HOSTILE")), not by process $pid" "$dir.$cmd.err"
  no_escapes "$name: $cmd prints nothing of the impostor's answer" "$dir.$cmd" "$dir.$cmd.err"
  expect_eq "$name: $cmd prints nothing on stdout" "" "$(cat "$dir.$cmd")"
done
kill "$pid" "$ipid" 2>/dev/null; wait "$pid" "$ipid" 2>/dev/null

# ---------------------------------------------------------------------------
# A runtime without a control socket: 4 descriptors leave none for it.
name=no-socket dir="$SCRATCH/$name"
mkdir -p "$dir"
(ulimit -n 4; exec "$XS" run -o "$dir" -- "$T/tw_idle" plain "$dir.stop") >"$dir.stdout" 2>"$dir.stderr" </dev/null &
pid=$! file="$dir/exitscope-$pid.jsonl"
children+=("$pid")
wait_for "$dir.stdout" '^ready' || fail "$name: the program started" "$(cat "$dir.stderr")"
check "$name: the log says why and names the other ways" \
  grep -q "cannot open the control socket (the process has no free file descriptor, errno 24).*kill -USR1 PID.*/dev/exitscope.*--interval" "$dir.stderr"
timeout 20 "$XS" dump "$pid" >"$dir.dump" 2>&1
st=$?
check "$name: dump fails (status $st)" test "$st" -eq 1
check "$name: dump says the process has no control socket and names the other ways" \
  grep -q "process $pid has no control socket.*kill -USR1 $pid.*/dev/exitscope.*--interval" "$dir.dump"
# (no descriptor is left for the record file either: the log shows it)
kill -USR1 "$pid"
wait_for "$dir.stderr" "(window #0, SIGUSR1" 5
check "$name: the control signal still closes a window" grep -q "^----- exitscope stats for process $pid (window #0, SIGUSR1" "$dir.stderr"
stop_target

# ---------------------------------------------------------------------------
# A program that holds every descriptor.
name=emfile dir="$SCRATCH/$name"
mkdir -p "$dir"
(ulimit -n 256; exec "$XS" run -o "$dir" -- "$T/th_ctl_emfile" "$dir.stop") >"$dir.stdout" 2>"$dir.stderr" </dev/null &
pid=$! file="$dir/exitscope-$pid.jsonl"
children+=("$pid")
wait_for "$dir.stdout" '^ready' || fail "$name: the program started" "$(cat "$dir.stderr")"
check "$name: the program holds every descriptor (EMFILE)" grep -q "^ready $pid held=[0-9]* errno=EMFILE" "$dir.stdout"
# three idle connections: each finds no descriptor to be accepted with
"$PY" "$shared/bin/idle.py" "$pid" 3 "$dir.idle" >"$dir.idle.err" 2>&1 &
cpid=$!; children+=("$cpid")
wait_for "$dir.idle" connected 5 || fail "$name: the idle clients connected" "$(cat "$dir.idle.err")"
cpu() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
c0=$(cpu); sleep 1.5; c1=$(cpu)
ticks=$((c1 - c0)) hz=$(getconf CLK_TCK)
check "$name: CPU time over 1.5 s with idle connections pending is low ($ticks ticks of 1/$hz s; < 0.2 s)" \
  test "$ticks" -lt $((hz / 5))
kill -USR1 "$pid"
wait_for "$file" '"reason": "signal"' 5
check "$name: SIGUSR1 closes a window" grep -q '"reason": "signal"' "$file"
t0=$(ms)
timeout 20 "$XS" dump "$pid" full >"$dir.dump" 2>"$dir.dump.err"
st=$? t1=$(ms)
expect_val "$name: dump exit status ($((t1 - t0)) ms)" 0 "$st"
check "$name: dump prints the block" grep -q "^----- exitscope stats for process $pid (window #1, command, label \"full\"" "$dir.dump"
check "$name: the log says once that the program holds every descriptor" \
  test "$(grep -c 'the program holds every file descriptor' "$dir.stderr")" -eq 1
kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null
stop_target
check "$name: the program ran to its end" grep -q '^getppid=' "$dir.stdout"
expect_val "$name: its file ends with the exit record, written while it held every descriptor" exit \
  "$(tail -n 1 "$file" 2>/dev/null | jq -r .reason)"
check "$name: the exit's text block is on the log" grep -q "^----- exitscope stats for process $pid (window #2, exit" "$dir.stderr"

# ---------------------------------------------------------------------------
# 20 idle connections and a dump.
name=idle20 dir="$SCRATCH/$name"
mkdir -p "$dir"
"$XS" run -o "$dir" -- "$T/tw_idle" plain "$dir.stop" >"$dir.stdout" 2>"$dir.stderr" </dev/null &
pid=$! file="$dir/exitscope-$pid.jsonl"
children+=("$pid")
wait_for "$dir.stdout" '^ready' || fail "$name: the program started" "$(cat "$dir.stderr")"
"$PY" "$shared/bin/idle.py" "$pid" 20 "$dir.idle" >"$dir.idle.err" 2>&1 &
cpid=$!; children+=("$cpid")
wait_for "$dir.idle" connected 5
expect_val "$name: 20 idle connections open" "connected 20" "$(cat "$dir.idle" 2>/dev/null)"
t0=$(ms)
timeout 60 "$XS" dump "$pid" busy >"$dir.dump" 2>"$dir.dump.err"
st=$? t1=$(ms)
took=$((t1 - t0))
expect_val "$name: dump exit status" 0 "$st"
check "$name: dump returns within 500 ms (took $took ms)" test "$took" -lt 500
echo "# $name: dump with 20 idle connections took $took ms"
check "$name: dump prints the block" grep -q "^----- exitscope stats for process $pid (window #0, command, label \"busy\"" "$dir.dump"
kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null
stop_target

# ---------------------------------------------------------------------------
# dump whatever --format says; dump --json.
name=format-none dir="$SCRATCH/$name"
mkdir -p "$dir"
"$XS" run -o "$dir" --format none -- "$T/tw_idle" plain "$dir.stop" >"$dir.stdout" 2>"$dir.stderr" </dev/null &
pid=$! file="$dir/exitscope-$pid.jsonl"
children+=("$pid")
wait_for "$dir.stdout" '^ready' || fail "$name: the program started" "$(cat "$dir.stderr")"
timeout 20 "$XS" dump "$pid" text >"$dir.dump" 2>"$dir.dump.err"
expect_val "$name: dump exit status" 0 "$?"
check "$name: dump prints the text block" \
  grep -q "^----- exitscope stats for process $pid (window #0, command, label \"text\"" "$dir.dump"
check "$name: ... with its system call table" grep -q ' total$' "$dir.dump"
timeout 20 "$XS" dump --json "$pid" json >"$dir.json" 2>"$dir.json.err"
expect_val "$name: dump --json exit status" 0 "$?"
expect_val "$name: dump --json prints one line" 1 "$(wc -l <"$dir.json")"
expect_val "$name: dump --json parses with jq: pid, seq, reason, label" "[$pid,1,\"command\",\"json\"]" \
  "$(jq -c '[.pid, .seq, .reason, .label]' "$dir.json" 2>/dev/null)"
expect_val "$name: dump --json prints the record written" "$(recs "$file" '.[1]' | jq -cS . 2>/dev/null)" \
  "$(jq -cS . "$dir.json" 2>/dev/null)"
check "$name: the log shows nothing (--format none)" test ! -s "$dir.stderr"
stop_target

# ---------------------------------------------------------------------------
# A root program that drops to nobody: dump as root and as nobody.
# (The runtime's service thread must follow the program's credentials for
# the runtime to let nobody in.)
name=privdrop dir="$shared/rw/$name"
mkdir -p "$dir"; chmod 777 "$dir"
nuid=$(id -u nobody) ngid=$(id -g nobody)
"$shared/bin/exitscope" run -o "$dir" -- "$shared/bin/th_ctl_drop" "$nuid" "$ngid" "$dir.stop" \
  >"$SCRATCH/$name.stdout" 2>"$SCRATCH/$name.stderr" </dev/null &
pid=$! file="$dir/exitscope-$pid.jsonl"
children+=("$pid")
wait_for "$SCRATCH/$name.stdout" '^dropped' || fail "$name: the program started" "$(cat "$SCRATCH/$name.stderr")"
expect_val "$name: the program dropped to nobody" "dropped $pid uid=$nuid euid=$nuid" "$(head -n 1 "$SCRATCH/$name.stdout")"
timeout 20 "$XS" dump "$pid" root >"$SCRATCH/$name.root" 2>&1
expect_val "$name: dump as root: exit status" 0 "$?"
check "$name: dump as root prints the block" grep -q "^----- exitscope stats for process $pid (window #0" "$SCRATCH/$name.root"
timeout 20 setpriv --reuid=nobody --regid="$ngid" --clear-groups "$shared/bin/exitscope" dump "$pid" nobody \
  >"$SCRATCH/$name.nobody" 2>&1
st=$?
if [ "$st" -eq 0 ]; then ok "$name: dump as nobody: exit status 0"
else fail "$name: dump as nobody: exit status 0" "status $st: $(head -c 400 "$SCRATCH/$name.nobody")"; fi
check "$name: dump as nobody prints the block" grep -q "^----- exitscope stats for process $pid (window #1" "$SCRATCH/$name.nobody"
touch "$dir.stop"
for ((i = 0; i < 500; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
