#!/usr/bin/env bash
# bench/redis.sh VARIANT: redis-server under VARIANT (see bench/lib.sh), on a
# private unix socket, no persistence; redis-benchmark (native, never traced)
# runs GET and SET against it, not pipelined (-P 1) and pipelined (-P 16),
# 50 clients; then the server is shut down (SHUTDOWN NOSAVE) and must exit.
# Prints, one per line, "redis_<set|get>_p<1|16>_<rps|p99> VALUE" (requests
# per second; p99 latency in ms, as redis-benchmark's --csv prints them).
# Environment: XS (exitscope binary), VTMP (scratch directory, this script's
#   own), REDIS_N (requests, -P 1: 100000), REDIS_N16 (requests, -P 16:
#   1000000), REDIS_SLOW (divide the request counts under strace and
#   perf trace: 5). Stops with a non-zero status if anything fails, and never
#   leaves a server running.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
[ $# -eq 1 ] || die "usage: bench/redis.sh VARIANT"
variant=$1
: "${XS:?}" "${VTMP:?}"
REDIS_N=${REDIS_N:-100000}
REDIS_N16=${REDIS_N16:-1000000}
REDIS_SLOW=${REDIS_SLOW:-5}
n1=$REDIS_N; n16=$REDIS_N16
case $variant in strace | ptrace) n1=$((n1 / REDIS_SLOW)); n16=$((n16 / REDIS_SLOW)) ;; esac

sock=$VTMP/redis.sock
rm -f "$sock"
wrap "$variant"
server=
stop_server() {
  [ -n "$server" ] || return 0
  if kill -0 "$server" 2>/dev/null; then
    redis-cli -s "$sock" shutdown nosave >/dev/null 2>&1
    # perf stat takes seconds to disable its tracepoints after the server exits
    for _ in $(seq 600); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$server" 2>/dev/null; then
      kill -KILL "$server" 2>/dev/null
      wait "$server" 2>/dev/null
      server=
      return 1
    fi
  fi
  wait "$server"
  local st=$?
  server=
  return "$st"
}
trap 'stop_server' EXIT

"${WRAP[@]}" redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no \
  --daemonize no --logfile "$VTMP/redis.log" --dir "$VTMP" </dev/null >"$VTMP/redis.stdout" 2>&1 &
server=$!
for _ in $(seq 300); do
  [ "$(redis-cli -s "$sock" ping 2>/dev/null)" = PONG ] && break
  kill -0 "$server" 2>/dev/null || die "redis-server under $variant exited: $(tail -c 500 "$VTMP/redis.stdout")"
  sleep 0.1
done
[ "$(redis-cli -s "$sock" ping 2>/dev/null)" = PONG ] || die "redis-server under $variant does not answer"

for p in 1 16; do
  n=$n1; [ "$p" = 16 ] && n=$n16
  csv=$(redis-benchmark -s "$sock" -t set,get -n "$n" -P "$p" -c 50 --csv 2>"$VTMP/bench.err") ||
    die "redis-benchmark -P $p under $variant failed: $(tail -c 300 "$VTMP/bench.err")"
  for t in SET GET; do
    line=$(grep "^\"$t\"," <<<"$csv") || die "redis-benchmark -P $p under $variant: no $t line in '$csv'"
    # "SET","rps","avg","min","p50","p95","p99","max"
    IFS=, read -r _ rps _ _ _ _ p99 _ <<<"${line//\"/}"
    [[ $rps =~ ^[0-9.]+$ && $p99 =~ ^[0-9.]+$ ]] || die "redis-benchmark printed '$line'"
    lc=${t,,}
    echo "redis_${lc}_p${p}_rps $rps"
    echo "redis_${lc}_p${p}_p99 $p99"
  done
done
stop_server || die "redis-server under $variant did not exit cleanly (status $?)"
check_variant "$variant"
