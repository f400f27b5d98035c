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
echo "records written (one JSON object per closed window):"
for f in "$out"/exitscope-*.jsonl; do
  if command -v jq >/dev/null; then
    jq -r --arg f "${f#"$root"/}" '"  \($f): seq \(.seq) reason=\(.reason) exits=\(.total.exits) enters=\(.total.enters) threads=\(.threads | length) top=\(.window.syscalls | to_entries | max_by(.value.calls) | .key)"' "$f"
  else
    echo "  ${f#"$root"/}: $(wc -l < "$f") record(s)"
  fi
done
