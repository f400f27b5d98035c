#!/usr/bin/env bash
# t910: a real forking server as one run. Debian's redis-server under
# exitscope (its default run directory), a warm-up, then a workload
# (redis-benchmark SET and GET) during which BGSAVE forks a child twice:
#   window 1: `dump RUN warm`, by command, after the warm-up;
#   window 2: the control signal sent to the run's first process while the
#     first BGSAVE child is alive (a save slowed by rdb-key-save-delay), so
#     that the window closes in that child too, mid-life;
#   window 3: `dump RUN workload`, after a second, quick BGSAVE whose
#     child starts and ends inside it.
# Checks: the windows' lines in the run file; each BGSAVE child in the
# windows it lived in (the first in 2 and 3, the second in 3 only); the
# report's programs (redis-server, redis-rdb-bgsave x N); exactness: for
# every system call the run-wide windows sum to the run's total, and the
# processes to the tree. The numbers of the run are printed as # lines.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0
for cmd in redis-server redis-benchmark redis-cli jq; do
  if ! command -v "$cmd" >/dev/null; then
    fail "redis: $cmd is installed (apt-get install redis-server redis-tools jq; .ci/run does)"
    exit 0
  fi
done
cd "$SCRATCH" || exit 1

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$XS" run --format none -- redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
  --daemonize no --dir "$SCRATCH" --loglevel warning >redis.out 2>redis.err </dev/null &
pid=$!
d=exitscope-$pid
cli() { timeout 30 redis-cli -p "$port" "$@"; }
if ! redis_up "$port"; then
  fail "redis: redis-server answers under exitscope" "$(head -c 1000 redis.err)"
  kill -KILL "$pid" 2>/dev/null
  exit 0
fi
ok "redis: redis-server answers under exitscope, run directory $d"
# bgsave_done: until no BGSAVE runs
bgsave_done() {
  for _ in $(seq 300); do
    cli info persistence | tr -d '\r' | grep -q '^rdb_bgsave_in_progress:0' && return 0
    sleep 0.05
  done
  return 1
}

timeout 120 redis-benchmark -p "$port" -n 20000 -r 100000 -q >warm.out 2>&1
expect_eq "redis: warm-up ran" 0 "$?"
"$XS" dump "$d" warm >dump1.out 2>&1
check "redis: dump RUN warm (run window 1)" grep -q '^ok run window 1: 1 processes' dump1.out
timeout 120 redis-benchmark -p "$port" -n 20000 -c 1 -P 1 -t set,get -q >work.out 2>&1 &
bench=$!
keys=$(cli dbsize)
# ~1 s of save: the child lives across the next window
cli config set rdb-key-save-delay $((1000000 / (keys > 0 ? keys : 1))) >/dev/null
cli bgsave >/dev/null
for _ in $(seq 100); do [ "$(grep -c '"event": "start"' "$d/run.jsonl")" -ge 2 ] && break; sleep 0.02; done
child_a=$(jq -r "select(.event == \"start\" and .pid != $pid) | .pid" "$d/run.jsonl" | head -n 1)
sleep 0.2
kill -USR1 "$pid"
wait_for "$d/run.jsonl" '"run_window": 2' 10
bgsave_done || fail "redis: the first BGSAVE ended"
cli config set rdb-key-save-delay 0 >/dev/null
cli bgsave >/dev/null
bgsave_done || fail "redis: the second BGSAVE ended"
wait "$bench"
expect_eq "redis: workload ran" 0 "$?"
"$XS" dump "$d" workload >dump3.out 2>&1
check "redis: dump RUN workload (run window 3)" grep -q '^ok run window 3: ' dump3.out
check "redis: both saves succeeded" sh -c "redis-cli -p $port info persistence | tr -d '\r' | grep -q '^rdb_last_bgsave_status:ok' && test -s dump.rdb"
cli shutdown nosave >/dev/null 2>&1
wait "$pid"
expect_eq "redis: exit status after shutdown nosave" 0 "$?"

child_b=$(jq -r "select(.event == \"start\" and .pid != $pid and .pid != ${child_a:-0}) | .pid" "$d/run.jsonl" | head -n 1)
w2=$(grep '"run_window": 2,' "$d/run.jsonl")
check "redis: window 2 was closed by the signal to the first process" grep -q "\"reason\": \"signal\", \"by\": $pid" <<<"$w2"
check "redis: window 2 reached the live BGSAVE child ($child_a) too" grep -q "{\"pid\": ${child_a:-none}, \"seq\": 0}" <<<"$w2"
"$XS" report --json "$d" >rep.json
"$XS" report "$d" >rep.txt
in_windows() { jq -r --argjson p "$1" '[.windows[] | select(.processes | map(.pid) | index($p)) | (.run_window // "rest")] | join(" ")' rep.json; }
expect_eq "redis: the first BGSAVE child is in the windows it lived in (2, 3)" "2 3" "$(in_windows "${child_a:-0}")"
expect_eq "redis: the second BGSAVE child, born and gone in window 3, is in 3 only" "3" "$(in_windows "${child_b:-0}")"
expect_eq "redis: the programs of window 3 (redis-server, redis-rdb-bgsave x 2)" "redis-rdb-bgsave:2 redis-server:1" \
  "$(jq -r '.windows[] | select(.run_window == 3) | [.programs[] | "\(.program):\(.processes)"] | sort | join(" ")' rep.json)"
check "redis: report RUN names both programs" sh -c "grep -q '^  redis-server  *x 1 ' rep.txt && grep -q '^  redis-rdb-bgsave  *x 2 ' rep.txt"
# exactness: every system call and counter, windows against the total, processes against the tree
bad=$(jq -r '
  def calls(c): c.syscalls | with_entries(.value = .value.calls);
  (.total.totals) as $t
  | ([.windows[].totals] | reduce .[] as $w ({}; reduce ($w.syscalls | to_entries[]) as $e (.; .[$e.key] += $e.value.calls))) as $ws
  | ([.windows[].totals.exits] | add) as $wexits
  | [calls($t) | to_entries[] | select($ws[.key] != .value) | "\(.key): total \(.value), windows \($ws[.key])"]
    + (if $wexits != $t.exits then ["exits: total \($t.exits), windows \($wexits)"] else [] end)
    + (if ($t.syscalls | length) < 10 or (.windows | length) < 4 then ["too few calls or windows to compare"] else [] end)
  | if length == 0 then "none" else join("; ") end' rep.json)
expect_eq "redis: for every system call, the run-wide windows sum to the run's total" "none" "$bad"
tree=$(jq '.total.totals.exits' rep.json)
expect_eq "redis: the processes sum to the tree (exits)" "${tree:-missing}" "$(jq '[.processes[].exits] | add' rep.json)"
echo "# redis: $(jq -r '[.windows[] | "window \(.run_window // "rest") (\(.label // .reason)): \(.processes | length) processes, \(.totals.exits) exits, read \(.totals.syscalls.read.calls // 0) write \(.totals.syscalls.write.calls // 0)"] | join("; ")' rep.json)"
echo "# redis: BGSAVE children $child_a ($(jq -r --argjson p "${child_a:-0}" '.processes[] | select(.pid == $p) | .exits' rep.json) exits), $child_b ($(jq -r --argjson p "${child_b:-0}" '.processes[] | select(.pid == $p) | .exits' rep.json) exits)"
