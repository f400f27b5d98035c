#!/usr/bin/env bash
# The README's first example, run for real: a small web server (python3's
# http.server) under exitscope, a window closed around 20 requests with
# `exitscope dump`, and the run's report. The commands and everything they
# print go between the <!-- example:start --> and <!-- example:end -->
# markers of README.md (or of the file given), so the example is generated,
# never typed. Needs python3 and curl.
# Usage: docs/examples/readme.sh [README.md]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
readme=${1:-$root/README.md}
grep -q '<!-- example:start -->' "$readme" && grep -q '<!-- example:end -->' "$readme" || {
  echo "readme.sh: $readme has no <!-- example:start --> ... <!-- example:end --> markers" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xs-readme.XXXXXX")
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
pid=
export PATH=$root/build:/usr/bin:/bin   # the system python3, as on a fresh Debian
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cd "$tmp"
section=$tmp/section.md
show() { printf '$ %s\n' "$1" >>"$section"; }

{ echo '```console'; } >"$section"
show "exitscope run --format none -- python3 -m http.server $port --bind 127.0.0.1 &"
exitscope run --format none -- python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
show 'exitscope reset $!                     # start-up ends here: a new window starts'
exitscope reset "$pid"
show "for i in \$(seq 20); do curl -s -o /dev/null http://127.0.0.1:$port/; done"
for _ in $(seq 20); do curl -s -o /dev/null "http://127.0.0.1:$port/"; done
show 'exitscope dump $! 20-requests          # close the window around them and print it'
exitscope dump "$pid" 20-requests >>"$section"
show "kill \$!; exitscope report exitscope-$pid/exitscope-$pid.jsonl   # every window of the process"
kill "$pid"; wait "$pid" 2>/dev/null || true
exitscope report "exitscope-$pid/exitscope-$pid.jsonl" >>"$section"
pid=
echo '```' >>"$section"

awk -v section="$section" '
  /<!-- example:start -->/ { print; while ((getline line < section) > 0) print line; skip = 1; next }
  /<!-- example:end -->/ { skip = 0 }
  !skip' "$readme" >"$tmp/README.md"
cat "$tmp/README.md" >"$readme"
