#!/usr/bin/env bash
# t140: a real server (issue 3, "A real server"). Debian's redis-server runs
# under exitscope on a free loopback port; redis-benchmark warms it up, a
# window is closed (dump warm), a fixed workload runs (SET and GET, N
# requests each, one client, no pipelining), another window is closed (dump
# workload). The workload window must hold the server's calls per request
# within the stated bounds, and nothing of the warm-up.
#
# Measured on the 2-CPU development VM (redis 7.0.15, N = 20000, 40000
# requests): read 40043, write 40001, epoll_wait 40005, accept4 10 (5 of them EAGAIN) -- that
# is 1.00 read, 1.00 write and 1.00 epoll_wait per request, 3.00 together.
# Bounds: (read + write + epoll_wait) per request in [2.5, 3.5]; read and
# write each in [0.9, 1.2] per request (the warm-up alone issued 400,000
# writes, so any leak breaks these); accept4 in the window == the
# connections redis itself counted between the two INFO calls + 1, counting
# successful accepts only (calls - errors: redis accepts until EAGAIN) (the first
# INFO's own connection is accepted inside the window, before it counts).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0

N=${REDIS_N:-20000}
name=redis
for cmd in redis-server redis-benchmark redis-cli; do
  if ! command -v "$cmd" >/dev/null; then
    fail "$name: $cmd is installed (apt-get install redis-server redis-tools; .ci/run does)"
    exit 0
  fi
done

expect_val() {
  if [ -z "$3" ]; then fail "$1" "expected: $2" "actual:   (no value: missing file, record or field)"
  else expect_eq "$@"; fi
}
# in_range NAME LOW HIGH VALUE (decimals allowed)
in_range() {
  if [ -n "$4" ] && awk -v v="$4" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; then
    ok "$1 ($4 in [$2, $3])"
  else fail "$1" "expected in [$2, $3], got '${4:-none}'"; fi
}

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dir="$SCRATCH/$name"
mkdir -p "$dir"
"$XS" run -o "$dir" --format none -- redis-server --port "$port" --bind 127.0.0.1 --save "" \
  --appendonly no --daemonize no --dir "$dir" --loglevel warning >"$dir.stdout" 2>"$dir.stderr" </dev/null &
pid=$!
file="$dir/exitscope-$pid.jsonl"
cli() { timeout 30 redis-cli -p "$port" "$@"; }
if ! redis_up "$port"; then
  fail "$name: redis-server answers under exitscope" "$(head -c 1000 "$dir.stderr")"
  kill -KILL "$pid" 2>/dev/null
  exit 0
fi
ok "$name: redis-server answers under exitscope"

conns() { cli info stats | tr -d '\r' | sed -n 's/^total_connections_received://p'; }

timeout 120 redis-benchmark -p "$port" -n 20000 -q >"$dir.warm" 2>&1
expect_val "$name: warm-up benchmark ran" 0 "$?"
check "$name: dump warm" "$XS" dump "$pid" warm
c0=$(conns)
timeout 120 redis-benchmark -p "$port" -n "$N" -c 1 -P 1 -t set,get -q >"$dir.work" 2>&1
expect_val "$name: workload benchmark ran" 0 "$?"
c1=$(conns)
check "$name: dump workload" "$XS" dump "$pid" workload
cli shutdown nosave >/dev/null 2>&1
for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$pid" 2>/dev/null; then fail "$name: shut down within 10 s (killed)"; kill -KILL "$pid"; fi
wait "$pid" 2>/dev/null
expect_val "$name: exit status after shutdown nosave" 0 "$?"

w() { jq -r "select(.label == \"workload\") | .window | $1" "$file" 2>/dev/null; }
requests=$((2 * N))
read=$(w '.syscalls.read.calls // 0') write=$(w '.syscalls.write.calls // 0')
ew=$(w '[.syscalls | to_entries[] | select(.key | test("^epoll_(p)?wait")) | .value.calls] | add // 0')
# successful accepts: redis accepts until EAGAIN
accepts=$(w '.syscalls | [.accept4, .accept | select(.) | .calls - .errors] | add // 0')
echo "# $name: workload window: $requests requests, read $read, write $write, epoll_wait* $ew, accept $accepts;" \
     "redis counted $(( ${c1:-0} - ${c0:-0} )) connections between the INFO calls"
per() { [ -n "$1" ] && awk -v a="$1" -v n="$requests" 'BEGIN { printf "%.3f\n", a / n }'; }
in_range "$name: (read + write + epoll_wait) per request" 2.5 3.5 "$(per "$((read + write + ew))")"
in_range "$name: read per request" 0.9 1.2 "$(per "$read")"
in_range "$name: write per request" 0.9 1.2 "$(per "$write")"
if [ -n "$c0" ] && [ -n "$c1" ]; then
  expect_val "$name: accepts in the window == connections redis counted + 1 (no warm-up leak)" \
    "$((c1 - c0 + 1))" "$accepts"
else
  fail "$name: INFO stats readable"
fi
expect_val "$name: windows: warm, workload, exit" '["command warm","command workload","exit null"]' \
  "$(jq -sc '[.[] | "\(.reason) \(.label)"]' "$file" 2>/dev/null)"
# which way the calls went: with the fast path, nearly all of them through
# rewritten sites (read, write, epoll_wait); without it, none
if [ "${EXITSCOPE_FAST_PATH:-on}" = off ]; then
  expect_val "$name: workload window: no exit took the fast path (dispatch only)" 0 "$(w '.exits_fast')"
else
  expect_val "$name: workload window: at least 90% of exits took the fast path" true \
    "$(w '.exits_fast >= 0.9 * .exits')"
fi
expect_val "$name: workload window: exits == sum of calls" true \
  "$(w '.exits == ([.syscalls[].calls] | add)')"
expect_val "$name: the last record's total == the sum of the windows (calls)" true \
  "$(jq -s '(map(.window.syscalls | map_values(.calls)) | reduce .[] as $o ({}; reduce ($o | to_entries[]) as $e (.; .[$e.key] += $e.value)))
            == (.[-1].total.syscalls | map_values(.calls))' "$file" 2>/dev/null)"
