# shellcheck shell=bash disable=SC2034
# Shared helpers for integration tests (sourced by tests/integration/t*.sh).
# Each check prints "ok - NAME" or "not ok - NAME" (with details indented);
# tests/run counts those lines. Every script runs in its own scratch dir,
# removed on exit.
set -u
XS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
XS_BUILD=${XS_BUILD:-$XS_ROOT/build}
XS=$XS_BUILD/exitscope
T=$XS_BUILD/targets
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/xs-test.XXXXXX")
# XS_KEEP_SCRATCH=1 keeps the scratch directory for a look after a failure
trap '[ -n "${XS_KEEP_SCRATCH:-}" ] || rm -rf "$SCRATCH"' EXIT

ok()   { echo "ok - $1"; }
fail() { echo "not ok - $1"; shift; for l in "$@"; do printf '    %s\n' "$l"; done; }

# check NAME CMD...: ok when CMD succeeds.
check() { local n=$1; shift; if "$@" >"$SCRATCH/.check.out" 2>&1; then ok "$n"; else fail "$n" "$(head -c 2000 "$SCRATCH/.check.out")"; fi; }

# expect_eq NAME EXPECTED ACTUAL
expect_eq() {
  if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "expected: $2" "actual:   $3"; fi
}

# last_record DIR PID: the last JSON record written for PID in DIR.
last_record() { tail -n 1 "$1/exitscope-$2.jsonl"; }

# wait_for FILE PATTERN [SECONDS]: until FILE has a line matching PATTERN.
wait_for() {
  local i
  for ((i = 0; i < ${3:-10} * 50; i++)); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.02
  done
  return 1
}

# golden NAME ARG...: run "exitscope ARG..." in the directory $G (so that
# file names in the output are short and stable); its exit status, stdout
# and stderr, laid out as below, must equal $G/NAME.golden byte for byte:
#   status N
#   --- stdout
#   ...
#   --- stderr
#   ...
# XS_GOLDEN_UPDATE=1 rewrites the golden files instead (review with git diff).
golden() {
  local name=$1; shift
  local got=$SCRATCH/$name.golden status xs
  xs=$(cd "$(dirname "$XS")" && pwd)/$(basename "$XS")
  (cd "$G" && "$xs" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null)
  status=$?
  { echo "status $status"; echo "--- stdout"; cat "$SCRATCH/out"; echo "--- stderr"; cat "$SCRATCH/err"; } >"$got"
  if [ -n "${XS_GOLDEN_UPDATE:-}" ]; then
    cp "$got" "$G/$name.golden"
    ok "golden $name: updated"
  elif cmp -s "$got" "$G/$name.golden"; then
    ok "golden $name: exitscope $*"
  else
    fail "golden $name: exitscope $*" "$(diff -u "$G/$name.golden" "$got" 2>&1 | head -40)"
  fi
}

# redis_up PORT: until redis-server on PORT answers PING (up to 10 s).
redis_up() {
  local i
  for ((i = 0; i < 100; i++)); do
    [ "$(timeout 30 redis-cli -p "$1" ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.1
  done
  return 1
}
