#!/usr/bin/env bash
# The HTML report of a real server, kept in docs/examples/: Debian's
# redis-server runs under `exitscope run -p` on a free loopback port;
# redis-benchmark warms it up (all default tests, 20000 requests) and a
# window is closed with `exitscope dump PID warm-up`; then the workload
# (SET and GET, 200000 requests each, 16 pipelined) and `dump PID
# workload`; then the server shuts down (the exit window). The report and
# its screenshot go to OUTDIR (default docs/examples):
#   redis-report.html, redis-report.png, redis-workload.svg (the workload's
#   flame graph) and redis-run/ (the records and profiles; not kept in git).
# Usage: docs/examples/redis.sh [OUTDIR]     (t520 runs it into a scratch dir)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:-$root/docs/examples}" && cd "${1:-$root/docs/examples}" && pwd)
XS=${XS:-$root/build/exitscope}
case $XS in */*) XS=$(cd "$(dirname "$XS")" && pwd)/$(basename "$XS") ;; esac   # the report runs from OUTDIR
run=$out/redis-run
rm -rf "$run" && mkdir -p "$run"
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$XS" run -o "$run" -p --format none -- redis-server --port "$port" --bind 127.0.0.1 --save "" \
  --appendonly no --daemonize no --dir "$run" --loglevel warning </dev/null >"$run/server.log" 2>&1 &
pid=$!
trap 'kill -KILL "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break
  sleep 0.1
done
redis-benchmark -p "$port" -n 20000 -q >"$run/warm-up.txt" 2>&1
"$XS" dump "$pid" warm-up >/dev/null
redis-benchmark -p "$port" -n 200000 -P 16 -t set,get -q >"$run/workload.txt" 2>&1
"$XS" dump "$pid" workload >/dev/null
redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
wait "$pid" || true
trap - EXIT
jsonl=$run/exitscope-$pid.jsonl
# from OUTDIR with a relative name: the page shows the record file's path
# as given, and a committed example carries no path of the machine that made it
(cd "$out" && "$XS" report --html "redis-run/exitscope-$pid.jsonl" -o redis-report.html)
workload_seq=$(jq -r 'select(.label == "workload") | .seq' "$jsonl")
"$XS" flame --per-thread --title "redis-server: the workload window (SET/GET, 16 pipelined)" \
  "$run/exitscope-$pid-$workload_seq.data" -o "$out/redis-workload.svg"
if command -v chromium >/dev/null; then
  /usr/bin/python3 "$root/tests/integration/lib-browser.py" --screenshot "$out/redis-report.png" "$out/redis-report.html" 3400
fi
echo "pid $pid workload seq $workload_seq"
