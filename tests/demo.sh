#!/usr/bin/env bash
# make demo: run the bundled demo program under exitscope and show what it
# recorded. The text block on stderr is the log; the JSON lines are the records.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/demo-out
rm -rf "$out"; mkdir -p "$out"
echo "\$ exitscope run -o build/demo-out -- build/demo/demo"
"$root/build/exitscope" run -o "$out" -- "$root/build/demo/demo"
echo
echo "records written (one JSON object per closed window; \"cumulative\" is the process total so far):"
for f in "$out"/exitscope-*.jsonl; do
  if command -v jq >/dev/null; then
    # the window's own numbers, as the block above shows them; the running
    # total (the block's right-hand column) is labelled as such
    jq -r --arg f "${f#"$root"/}" '"  \($f): seq \(.seq) \(.reason)\(if .label then " \"\(.label)\"" else "" end): this window exits=\(.window.exits) enters=\(.window.enters) threads=\(.threads | length) top=\(.window.syscalls | to_entries | max_by(.value.calls) | .key); cumulative exits=\(.total.exits)"' "$f"
  else
    echo "  ${f#"$root"/}: $(wc -l < "$f") record(s)"
  fi
done

# the pictures: an HTML report of the demo's main process (no perf needed),
# and, when perf is installed, a profiled run and its flame graph
biggest() { local f best='' size=-1; for f in "$@"; do [ "$(stat -c %s "$f")" -gt "$size" ] && best=$f size=$(stat -c %s "$f"); done; echo "$best"; }
main_jsonl=$(biggest "$out"/exitscope-*.jsonl)
echo
echo "\$ exitscope report --html ${main_jsonl#"$root"/}"
"$root/build/exitscope" report --html "$main_jsonl" -o "$out/report.html"
if command -v perf >/dev/null && command -v jq >/dev/null; then
  mkdir -p "$out/profiled"
  echo "\$ exitscope run -p --format none -o build/demo-out/profiled -- build/demo/demo"
  "$root/build/exitscope" run -p --format none -o "$out/profiled" -- "$root/build/demo/demo" >/dev/null
  prof_jsonl=$(biggest "$out"/profiled/exitscope-*.jsonl)
  busy=$(jq -r 'select(.label == "busy") | .profile.file' "$prof_jsonl" 2>/dev/null)
  data=$out/profiled/${busy:-none}
  echo "\$ exitscope flame --per-thread ${data#"$root"/} -o build/demo-out/flame.svg    # the busy window"
  "$root/build/exitscope" flame --per-thread "$data" -o "$out/flame.svg"
  echo "\$ exitscope report --html ${prof_jsonl#"$root"/} -o build/demo-out/profiled/report.html"
  "$root/build/exitscope" report --html "$prof_jsonl" -o "$out/profiled/report.html"
  echo "open build/demo-out/report.html, build/demo-out/profiled/report.html and build/demo-out/flame.svg in a browser"
else
  echo "open build/demo-out/report.html in a browser (flame graphs need linux-perf and jq)"
fi
