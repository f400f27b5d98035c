#!/usr/bin/env bash
# bench/report_speed.sh: how long `exitscope report --html` and `exitscope
# flame` take on a run of 20 windows and about 1 million samples (issue 5's
# speed figure). A real run gives the windows: tp_hot closes 20 windows,
# each after burning MS ms of CPU, profiled with -F 1000 (-g fp by default).
# Each window's perf.data is then grown to about 50000 samples by writing
# every sample record K times (bench/replicate_samples.py), so perf script
# unwinds and symbolizes each copy for real; the records' sample counts are
# updated to match. Prints a markdown table; RESULTS_MD=FILE appends it there.
# Environment: WINDOWS (20), PER_WINDOW (50000), MS (500), CG (fp), XS_BUILD.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
XS_BUILD=${XS_BUILD:-$root/build}
XS=$XS_BUILD/exitscope
WINDOWS=${WINDOWS:-20} PER_WINDOW=${PER_WINDOW:-50000} MS=${MS:-500} CG=${CG:-fp}
command -v perf >/dev/null || { echo "report_speed: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xs-report-speed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$XS" run -o "$tmp" -p -F 1000 -g "$CG" --format none -- "$XS_BUILD/targets/tp_hot" rotate "$WINDOWS" "$MS" >/dev/null
jsonl=$(ls "$tmp"/exitscope-*.jsonl)
: >"$tmp/counts"
while read -r seq file samples; do
  [ "$samples" -gt 0 ] || continue
  k=$(( (PER_WINDOW + samples - 1) / samples ))
  n=$(/usr/bin/python3 "$root/bench/replicate_samples.py" "$tmp/$file" "$tmp/big.data" "$k")
  mv "$tmp/big.data" "$tmp/$file"
  echo "$seq $n" >>"$tmp/counts"
done < <(jq -r 'select(.profile != null) | "\(.seq) \(.profile.file) \(.profile.samples)"' "$jsonl")
# the records say how many samples their files now hold
jq -c --slurpfile c <(awk '{ printf "{\"seq\": %s, \"n\": %s}\n", $1, $2 }' "$tmp/counts") '
  . as $r | ([$c[] | select(.seq == $r.seq) | .n] | first) as $n
  | if $n != null then .profile.samples = $n else . end' "$jsonl" >"$tmp/run.jsonl"
mv "$tmp/run.jsonl" "$jsonl"
total=$(awk '{ s += $2 } END { print s }' "$tmp/counts")
windows=$(wc -l <"$jsonl")
bytes=$(cat "$tmp"/*.data | wc -c)

t0=$(date +%s%N)
"$XS" report --html "$jsonl" -o "$tmp/report.html" 2>/dev/null
t1=$(date +%s%N)
for f in "$tmp"/exitscope-*-*.data; do "$XS" flame "$f" -o "$tmp/one.svg" 2>/dev/null; done
t2=$(date +%s%N)
t3=$(date +%s%N)
for f in "$tmp"/exitscope-*-*.data; do perf script -i "$f" -F comm,tid,period,ip,sym,dso >/dev/null 2>&1; done
t4=$(date +%s%N)
sec() { awk -v n="$1" 'BEGIN { printf "%.2f", n / 1e9 }'; }
table=$(cat <<MD
| what ($windows windows, $total samples, -g $CG, $((bytes / 1048576)) MiB of perf.data) | seconds | µs per sample |
|---|---|---|
| \`exitscope report --html\` (tables, charts and every window's flame graph) | $(sec $((t1 - t0))) | $(awk -v t=$((t1 - t0)) -v n="$total" 'BEGIN { printf "%.1f", t / 1e3 / n }') |
| \`exitscope flame\` on each window's file, one after another | $(sec $((t2 - t1))) | $(awk -v t=$((t2 - t1)) -v n="$total" 'BEGIN { printf "%.1f", t / 1e3 / n }') |
| of which \`perf script\` alone (same files, same fields) | $(sec $((t4 - t3))) | $(awk -v t=$((t4 - t3)) -v n="$total" 'BEGIN { printf "%.1f", t / 1e3 / n }') |
| the HTML page's size | $(( $(wc -c <"$tmp/report.html") / 1024 )) KiB | |
MD
)
echo "$table"
if [ -n "${RESULTS_MD:-}" ]; then printf '\n%s\n' "$table" >>"$RESULTS_MD"; fi
