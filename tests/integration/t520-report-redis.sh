#!/usr/bin/env bash
# t520: the HTML report of a real server. docs/examples/redis.sh runs
# redis-server under `exitscope run -p` with a warm-up window and a
# workload window (400000 SET/GET requests, 16 pipelined: about 25000
# batches) and writes the report. The workload window's section must show
# read and write among its top three calls by count, with read calls near
# one per batch, and its flame graph must hold the functions that serve
# those requests (readQueryFromClient, processCommand).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
for cmd in redis-server redis-benchmark redis-cli perf jq; do
  if ! command -v "$cmd" >/dev/null; then fail "$cmd is installed (.ci/run installs it)"; exit 0; fi
done
out=$SCRATCH/example
XS=$XS "$XS_ROOT/docs/examples/redis.sh" "$out" >"$SCRATCH/example.log" 2>&1
expect_eq "docs/examples/redis.sh ran" 0 "$?"
html=$out/redis-report.html
seq=$(sed -n 's/^pid [0-9]* workload seq \([0-9]*\)$/\1/p' "$SCRATCH/example.log")
/usr/bin/python3 - "$html" "${seq:-none}" <<'PY'
import re, sys
html, seq = open(sys.argv[1]).read(), sys.argv[2]
def check(name, cond, *detail):
    print(("ok - " if cond else "not ok - ") + name)
    if not cond:
        for d in detail:
            print("    " + str(d)[:1000])
m = re.search(r'<section class="window" id="w\d+" data-seq="%s">(.*?)</section>' % re.escape(seq), html, re.S)
check("redis report: the workload window has a section (seq %s)" % seq, m is not None)
if m:
    sec = m.group(1)
    chart = re.search(r'<svg class="xs-chart".*?</svg>', sec, re.S).group(0)
    by_count = chart.split('top system calls by time')[0]
    bars = re.findall(r'<g class="bar" data-name="([^"]+)" data-value="(\d+)"', by_count)
    top3 = [b[0] for b in bars[:3]]
    check("redis report: read and write are among the workload's top three calls (%s)" % ", ".join(top3),
          "read" in top3 and "write" in top3, bars)
    reads = dict(bars).get("read", "0")
    check("redis report: about one read per pipelined batch of 16 (%s reads for 25000 batches)" % reads,
          22000 <= int(reads) <= 40000)
    flame = re.search(r'<svg xmlns="http://www.w3.org/2000/svg" class="xs-flame".*?</svg>', sec, re.S)
    labels = set(re.findall(r'data-l="([^" ]+)', flame.group(0))) if flame else set()
    for fn in ("readQueryFromClient", "processCommand"):
        check("redis report: the workload's flame graph holds %s" % fn, fn in labels, sorted(labels)[:40])
PY
if [ -s "$out/redis-report.png" ]; then ok "redis report: screenshot taken"; else fail "redis report: screenshot taken" "$(tail -5 "$SCRATCH/example.log")"; fi
