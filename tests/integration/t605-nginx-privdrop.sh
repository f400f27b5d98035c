#!/usr/bin/env bash
# t605: a real server whose workers drop root (issue 10: "a server that
# forks workers which drop root, under load, run under exitscope as root").
# Debian's nginx runs under exitscope as root, in the foreground, from a
# private configuration: 2 worker processes that drop to www-data, on a free
# loopback port, serving one small static file. The output directory is
# root's, mode 755: a worker can no longer create a file there once it has
# dropped, so its records reach the disk only through the file it opened
# when it started (as root).
# While a load runs (4 clients, one connection per request):
#  - every task of every worker (nginx's thread and the runtime's service
#    thread) has www-data's uid and gid in all four fields, only www-data's
#    own groups (initgroups: `id -G www-data`), no 0 anywhere, and empty
#    CapPrm and CapEff -- as natively; the master stays root, as natively;
#  - `exitscope dump WORKER` works as www-data and as root.
# After a graceful stop (SIGQUIT to the master): status 0, every process's
# file ends with its exit record, each worker's file holds the two dump
# windows, and the workers' successful accept4 calls equal the requests
# nginx logged (one connection per request), which include every request
# the load made. The numbers are printed, and, when strace is installed,
# those of `strace -f -c` on the same workload (not compared: nginx's
# timing varies).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0

name=nginx
NGINX=/usr/sbin/nginx
N=${NGINX_N:-2000}	# the load makes at least N requests
USR=www-data
PY=/usr/bin/python3

if [ ! -x "$NGINX" ]; then
  fail "$name: $NGINX is installed (apt-get install nginx; .ci/run does)"
  exit 0
fi
if ! id "$USR" >/dev/null 2>&1; then
  fail "$name: user $USR exists (Debian's nginx runs its workers as $USR)"
  exit 0
fi

expect_val() {
  if [ -z "$3" ]; then fail "$1" "expected: $2" "actual:   (no value: missing file, record or field)"
  else expect_eq "$@"; fi
}

# Everything www-data must reach (the document root, exitscope's CLI) sits
# in a directory everyone can read (see t120); the scratch dir is root's 700.
shared=$(mktemp -d "${TMPDIR:-/tmp}/xs-t605.XXXXXX")
children=()
cleanup() {
  local p
  for p in "${children[@]}"; do kill -KILL "$p" 2>/dev/null; done
  [ -n "${XS_KEEP_SCRATCH:-}" ] || rm -rf "$SCRATCH" "$shared"
}
trap cleanup EXIT
chmod 755 "$shared"; mkdir -p "$shared/bin/lib" "$shared/html"
cp "$XS" "$shared/bin/exitscope"; cp "$XS_BUILD/lib/libexitscope.so" "$shared/bin/lib/"
chmod -R a+rX "$shared/bin"
body="exitscope t605: a small static file"
echo "$body" >"$shared/html/index.html"; chmod 644 "$shared/html/index.html"

# load.py PORT MIN STOPFILE PROGRESSFILE: 4 clients, one connection per
# request, GET /index.html?load; at least MIN requests, and on until
# STOPFILE exists. PROGRESSFILE gets "serving" after 200 good answers.
# Prints "requests R good G" and the first bad answers.
cat >"$SCRATCH/load.py" <<'EOF'
import http.client, os, sys, threading
port, least, stop, progress = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
want = open(sys.argv[5], "rb").read()
lock = threading.Lock()
made = good = 0
bad = []
def client():
    global made, good
    while True:
        with lock:
            if made >= least and os.path.exists(stop):
                return
            made += 1
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            c.request("GET", "/index.html?load")
            r = c.getresponse()
            data = r.read()
            c.close()
            res = (r.status, data)
        except OSError as e:
            res = (repr(e), b"")
        with lock:
            if res == (200, want):
                good += 1
                if good == 200:
                    with open(progress, "w") as f:
                        f.write("serving\n")
            elif len(bad) < 5:
                bad.append(res)
threads = [threading.Thread(target=client) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print("requests %d good %d" % (made, good))
for b in bad: print("bad answer: %r" % (b,))
EOF

# conf DIR PORT: a private configuration in DIR (logs, pid, temp paths).
conf() {
  mkdir -p "$1/tmp"
  cat >"$1/nginx.conf" <<EOF
user $USR;
worker_processes 2;
daemon off;
pid $1/nginx.pid;
lock_file $1/nginx.lock;
error_log $1/error.log notice;
events { worker_connections 512; }
http {
  access_log $1/access.log;
  default_type text/plain;
  client_body_temp_path $1/tmp/body;
  proxy_temp_path $1/tmp/proxy;
  fastcgi_temp_path $1/tmp/fastcgi;
  uwsgi_temp_path $1/tmp/uwsgi;
  scgi_temp_path $1/tmp/scgi;
  server {
    listen 127.0.0.1:$2;
    root $shared/html;
  }
}
EOF
}
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# serving PORT: until nginx answers with the file (10 s).
serving() {
  local i
  for ((i = 0; i < 100; i++)); do
    [ "$(curl -s --max-time 2 "http://127.0.0.1:$1/index.html?probe" 2>/dev/null)" = "$body" ] && return 0
    sleep 0.1
  done
  return 1
}
# stop_nginx PID: SIGQUIT (graceful), wait up to 15 s; sets $stopped to
# its status (not in a subshell: only this shell can wait for it).
stop_nginx() {
  local i
  kill -QUIT "$1" 2>/dev/null
  for ((i = 0; i < 300; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$1" 2>/dev/null; then kill -KILL "$1" 2>/dev/null; wait "$1" 2>/dev/null; stopped="killed after 15 s"
  else wait "$1" 2>/dev/null; stopped=$?; fi
}
# creds TASKDIR: the credential lines of one task, on one line.
creds() {
  awk '/^Uid:/ { u = $2 " " $3 " " $4 " " $5 } /^Gid:/ { g = $2 " " $3 " " $4 " " $5 }
       /^Groups:/ { $1 = ""; gr = $0; sub(/^ +/, "", gr); sub(/ +$/, "", gr) }
       /^CapPrm:/ { p = $2 } /^CapEff:/ { e = $2 }
       END { printf "uid %s gid %s groups %s capprm %s capeff %s\n", u, g, gr, p, e }' "$1/status" 2>/dev/null
}

# ---------------------------------------------------------------------------
d=$shared/run port=$(free_port)
conf "$d" "$port"
out=$d/out; mkdir -p "$out"; chmod 755 "$out"
# (--signal none: nginx takes SIGUSR1 for itself; dump is the way here)
"$XS" run -o "$out" --signal none --format none -- "$NGINX" -p "$d" -e "$d/error.log" -c "$d/nginx.conf" \
  >"$SCRATCH/stdout" 2>"$SCRATCH/stderr" </dev/null &
pid=$!; children+=("$pid")
if ! serving "$port"; then
  fail "$name: nginx serves the file under exitscope" "$(head -c 1000 "$SCRATCH/stderr")" "$(tail -n 5 "$d/error.log" 2>/dev/null)"
  exit 0
fi
ok "$name: nginx serves the file under exitscope (port $port)"
if setpriv --reuid="$USR" --regid="$USR" --clear-groups touch "$out/probe" 2>/dev/null; then
  fail "$name: $USR cannot create files in the output directory (root's, mode 755)"; rm -f "$out/probe"
else ok "$name: $USR cannot create files in the output directory (root's, mode 755)"; fi

# the load
"$PY" "$SCRATCH/load.py" "$port" "$N" "$SCRATCH/load.stop" "$SCRATCH/load.progress" "$shared/html/index.html" \
  >"$SCRATCH/load.out" 2>&1 &
lpid=$!; children+=("$lpid")
wait_for "$SCRATCH/load.progress" serving 20 || fail "$name: the load gets answers" "$(cat "$SCRATCH/load.out")"

# the nginx tree, under load
mapfile -t workers < <(pgrep -P "$pid" | sort -n)
expect_eq "$name: the master has 2 children" 2 "${#workers[@]}"
wk_bad="" wk_tasks=""
want="uid $(id -u "$USR") $(id -u "$USR") $(id -u "$USR") $(id -u "$USR") gid $(id -g "$USR") $(id -g "$USR") $(id -g "$USR") $(id -g "$USR") groups $(id -G "$USR") capprm 0000000000000000 capeff 0000000000000000"
for w in "${workers[@]}"; do
  n=0
  for t in /proc/"$w"/task/*; do
    c=$(creds "$t") n=$((n + 1))
    [ "$c" = "$want" ] || wk_bad="$wk_bad
worker $w task ${t##*/} ($(cat "$t/comm" 2>/dev/null)): $c"
  done
  wk_tasks="$wk_tasks $w:$n"
  expect_eq "$name: worker $w is nginx's worker" "nginx: worker process" "$(tr '\0' ' ' <"/proc/$w/cmdline" | sed 's/ *$//')"
  check "$name: worker $w lists at least 2 tasks (its thread and the runtime's service thread: $n)" test "$n" -ge 2
done
if [ -z "$wk_bad" ] && [ "${#workers[@]}" -gt 0 ]; then
  ok "$name: every task of every worker has only $USR's credentials ($want)"
else
  fail "$name: every task of every worker has only $USR's credentials ($want)" "$wk_bad"
fi
# any 0 at all (uid, gid, groups) or a capability left: said on its own
zero=$(for w in "${workers[@]}"; do for t in /proc/"$w"/task/*; do
  creds "$t" | awk -v t="$w/${t##*/}" '{ for (i = 2; i <= NF; i++) if ($i == "0") { print t; next }
    if ($(NF - 2) != "0000000000000000" || $NF != "0000000000000000") print t }'; done; done | tr '\n' ' ')
expect_eq "$name: no worker task keeps uid 0, gid 0, group 0 or a capability" "" "$zero"
m=""; for t in /proc/"$pid"/task/*; do m="$m ${t##*/}:$(creds "$t" | awk '{ print $2 }')"; done
echo "# $name: master $pid tasks (tid:uid):$m (root, as natively); workers (pid:tasks):$wk_tasks"

for w in "${workers[@]}"; do
  timeout 20 setpriv --reuid="$USR" --regid="$USR" --clear-groups "$shared/bin/exitscope" dump "$w" "as-$USR" \
    >"$SCRATCH/dump-$w-user" 2>&1
  st=$?
  if [ "$st" -eq 0 ]; then ok "$name: dump $w as $USR: exit status 0"
  else fail "$name: dump $w as $USR: exit status 0" "status $st: $(head -c 400 "$SCRATCH/dump-$w-user")"; fi
  check "$name: dump $w as $USR prints the window's block" \
    grep -q "^----- exitscope stats for process $w (window #0, command, label \"as-$USR\"" "$SCRATCH/dump-$w-user"
  timeout 20 "$XS" dump "$w" as-root >"$SCRATCH/dump-$w-root" 2>&1
  st=$?
  if [ "$st" -eq 0 ]; then ok "$name: dump $w as root: exit status 0"
  else fail "$name: dump $w as root: exit status 0" "status $st: $(head -c 400 "$SCRATCH/dump-$w-root")"; fi
  check "$name: dump $w as root prints the window's block" \
    grep -q "^----- exitscope stats for process $w (window #[0-9]*, command, label \"as-root\"" "$SCRATCH/dump-$w-root"
done
check "$name: the checks above ran under load (the load was still running)" kill -0 "$lpid"

touch "$SCRATCH/load.stop"
wait "$lpid"
read -r _ made _ good < <(head -n 1 "$SCRATCH/load.out")
expect_val "$name: every request of the load got the file ($made requests)" "${made:-?}" "${good:-}"
check "$name: the load made at least $N requests" test "${made:-0}" -ge "$N"
stop_nginx "$pid"
expect_eq "$name: exit status after SIGQUIT (graceful stop)" 0 "$stopped"
expect_eq "$name: nothing on the log" "" "$(cat "$SCRATCH/stderr")"

# the record files
files=$(find "$out" -name 'exitscope-*.jsonl' | sort)
expect_eq "$name: one record file per process (master and 2 workers)" \
  "$(for p in "$pid" "${workers[@]}"; do echo "$out/exitscope-$p.jsonl"; done | sort)" "$files"
bad=""
for f in $files; do
  [ "$(tail -n 1 "$f" | jq -r .reason 2>/dev/null)" = exit ] || bad="$bad $(basename "$f"):no-exit-record"
done
expect_eq "$name: every process's file ends with its exit record" "" "$bad"
for w in "${workers[@]}"; do
  expect_val "$name: worker $w's file holds its two dump windows, then its exit" "as-$USR as-root exit" \
    "$(jq -r '.label // .reason' "$out/exitscope-$w.jsonl" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
done

# counts: successful accept4 calls == requests nginx logged
logged=$(wc -l <"$d/access.log")
logged_load=$(grep -c 'GET /index.html?load ' "$d/access.log")
expect_eq "$name: nginx logged every request of the load" "$made" "$logged_load"
sum() { # sum CALL FIELD FILE...: over the exit records' totals
  local c=$1 fld=$2; shift 2
  for f in "$@"; do tail -n 1 "$f"; done | jq -s "[.[] | .total.syscalls.$c.$fld // 0] | add // 0" 2>/dev/null
}
wf=(); for w in "${workers[@]}"; do wf+=("$out/exitscope-$w.jsonl"); done
acc=$(( $(sum accept4 calls "${wf[@]}") - $(sum accept4 errors "${wf[@]}") ))
expect_eq "$name: the workers' successful accept4 calls equal the requests nginx logged (one connection each)" \
  "$logged" "$acc"
writev=$(sum writev calls "${wf[@]}") sendfile=$(sum sendfile calls "${wf[@]}")
check "$name: the workers' writev + sendfile calls ($writev + $sendfile) cover the $logged answers" \
  test $((writev + sendfile)) -ge "$logged"
per=""
for c in accept4 recvfrom writev sendfile write close epoll_wait epoll_ctl; do
  per="$per $c=$(sum "$c" calls "${wf[@]}")"
done
perw=""; for f in "${wf[@]}"; do perw="$perw $(tail -n 1 "$f" | jq -r '"\(.pid):\(.total.syscalls.accept4.calls // 0)"')"; done
per="$per (accept4 failed: $(sum accept4 errors "${wf[@]}"))"
echo "# $name: $made load requests, $logged logged; workers' calls:$per; accept4 per worker (pid:calls):$perw"
echo "# $name: all processes: $(for f in $files; do tail -n 1 "$f"; done | jq -rs '[.[] | .total.enters] | add') calls"

# the same workload under strace -f -c (printed, not compared)
if command -v strace >/dev/null; then
  d=$shared/strace port=$(free_port)
  conf "$d" "$port"
  rm -f "$SCRATCH/load.stop" "$SCRATCH/load.progress"
  strace -f -c -o "$SCRATCH/strace.out" "$NGINX" -p "$d" -e "$d/error.log" -c "$d/nginx.conf" \
    >"$SCRATCH/strace.stdout" 2>&1 </dev/null &
  spid=$!; children+=("$spid")
  if serving "$port"; then
    timeout 60 "$PY" "$SCRATCH/load.py" "$port" "$N" "$SCRATCH/load.stop-now" "$SCRATCH/load.progress" \
      "$shared/html/index.html" >"$SCRATCH/load-strace.out" 2>&1 </dev/null &
    lpid=$!; children+=("$lpid")
    touch "$SCRATCH/load.stop-now"; wait "$lpid"
    kill -QUIT "$(cat "$d/nginx.pid")" 2>/dev/null
    for ((i = 0; i < 300; i++)); do kill -0 "$spid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
    sc=""
    for c in accept4 recvfrom writev sendfile write close epoll_wait epoll_ctl; do
      sc="$sc $c=$(awk -v c="$c" '$NF == c { n = $4 } END { print n + 0 }' "$SCRATCH/strace.out")"
    done
    echo "# $name: strace -f -c, $(head -n 1 "$SCRATCH/load-strace.out"), $(wc -l <"$d/access.log") logged, all processes:$sc"
  else
    echo "# $name: nginx under strace did not answer; no strace numbers"
    kill -KILL "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
  fi
fi
