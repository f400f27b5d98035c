#!/usr/bin/env bash
# bench/window_latency.sh: how long closing a window takes.
#   - kill -USR1 to the record line on disk (build/targets/tw_latency measure:
#     kill(), then spin on the file until one more complete line is there),
#     with 256 threads idle (blocked in read) and 256 threads busy (getppid
#     as fast as they can);
#   - an exitscope_dump() from inside the program (/dev/exitscope; it returns
#     once the record is written).
# Prints a markdown table: median, min, max in milliseconds.
# A round that gets no record within 30 s ends that measurement; the table
# then says how many rounds timed out (and the median is of those that did
# not, so it is a lower bound).
# Environment: ROUNDS (21), BUSY_ROUNDS (5), THREADS (256), XS_BUILD (build).
# Needs `make` (it builds build/targets/tw_latency).
set -u -o pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
XS_BUILD=${XS_BUILD:-$root/build}
XS=$XS_BUILD/exitscope
LAT=$XS_BUILD/targets/tw_latency
ROUNDS=${ROUNDS:-21}
BUSY_ROUNDS=${BUSY_ROUNDS:-5}
THREADS=${THREADS:-256}

die() { echo "window_latency: $*" >&2; exit 1; }
if [ ! -x "$XS" ] || [ ! -x "$LAT" ]; then die "missing '$XS' or '$LAT' (run make)"; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/xs-lat.XXXXXX")
started=()
# on any exit: stop what we started (never leave 256 spinning threads behind)
cleanup() {
  local p
  for p in "${started[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT

# stats: "median min max" (ms) of microsecond values on stdin.
stats() {
  sort -g | awk '/^timeout/ { t++; next } { v[++n] = $1 / 1000 }
    END { if (n) printf "%.3f | %.3f | %.3f", v[int((n + 1) / 2)], v[1], v[n]; else printf "- | - | -"
          printf " | %d%s\n", n, t ? ", then 1 round > 30 s (stopped)" : "" }'
}

# signal_latency MODE ROUNDS: stats of kill -> record with THREADS threads in MODE.
signal_latency() {
  local mode=$1 rounds=$2 out="$TMP/$1" pid i st
  mkdir -p "$out"
  "$XS" run -o "$out" --format none -- "$LAT" "$mode" "$THREADS" "$out.stop" >"$out.stdout" 2>"$out.stderr" </dev/null &
  pid=$!
  started+=("$pid")
  for ((i = 0; i < 500; i++)); do grep -q '^ready' "$out.stdout" 2>/dev/null && break; sleep 0.02; done
  grep -q '^ready' "$out.stdout" || die "$mode: the program did not start: $(head -c 500 "$out.stderr")"
  sleep 0.5
  "$LAT" measure "$pid" "$out/exitscope-$pid.jsonl" "$rounds" >"$out.lat"
  st=$?
  [ "$st" -eq 0 ] || [ "$st" -eq 3 ] || die "$mode: measuring failed (status $st)"
  touch "$out.stop"
  wait "$pid" || die "$mode: the program failed (status $?)"
  stats <"$out.lat"
}

idle=$(signal_latency idle "$ROUNDS") || exit 1
busy=$(signal_latency busy "$BUSY_ROUNDS") || exit 1
mkdir -p "$TMP/dev"
"$XS" run -o "$TMP/dev" --format none -- "$LAT" devdump "$ROUNDS" >"$TMP/dev.lat" || die "devdump failed"
dev=$(stats <"$TMP/dev.lat")

echo "| window closed by | threads | median ms | min ms | max ms | rounds |"
echo "|---|---|---|---|---|---|"
echo "| kill -USR1 -> record on disk | $THREADS idle | $idle |"
echo "| kill -USR1 -> record on disk | $THREADS busy | $busy |"
echo "| exitscope_dump() (/dev/exitscope), 1 thread | 1 | $dev |"
echo
echo "($(nproc) CPUs)"
