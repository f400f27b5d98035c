#!/usr/bin/env bash
# The runtime needs no C library (the loader of static programs links the
# same objects):
#   - libexitscope.so imports no symbol, needs no library, exports none,
#     and has no vector instruction;
#   - preloaded by hand (no `exitscope run`), it configures itself from
#     the initial environment, writes its records into the working
#     directory (the getcwd call), hides LD_PRELOAD from the program and
#     still follows it into an exec'd child (it found its own file in
#     /proc/self/maps), with a clock that moves (the vDSO's).
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/../lib.sh"
lib=$XS_BUILD/lib/libexitscope.so

# ---- the shared object ----
imports=$(nm -D --undefined-only "$lib" 2>&1 | grep -v 'no symbols$')
if [ -z "$imports" ]; then ok "libexitscope.so imports no symbol"
else fail "libexitscope.so imports no symbol" "nm -D --undefined-only:" "$(echo "$imports" | tr -s ' \n' '  ')"; fi
exports=$(nm -D --defined-only "$lib" 2>&1 | grep -v 'no symbols$')
expect_eq "libexitscope.so exports no symbol" "" "$exports"
needed=$(readelf -d "$lib" | grep NEEDED)
expect_eq "libexitscope.so needs no library" "" "$needed"
expect_eq "libexitscope.so has no vector instruction" 0 "$(objdump -d "$lib" | grep -c '%[xyz]mm')"

# ---- preloaded by hand ----
mkdir -p "$SCRATCH/hand"
(cd "$SCRATCH/hand" && LD_PRELOAD=$lib sh -c \
  'echo "LD_PRELOAD=[${LD_PRELOAD-unset}]"; cd /; sh -c "echo \$\$; exec sleep 0.05" >"$0/childpid"' "$SCRATCH/hand") \
  >"$SCRATCH/hand.out" 2>"$SCRATCH/hand.err"
expect_eq "by hand: the program does not see LD_PRELOAD" "LD_PRELOAD=[unset]" "$(cat "$SCRATCH/hand.out")"
child=$(cat "$SCRATCH/hand/childpid" 2>/dev/null)
records=$(cd "$SCRATCH/hand" && ls exitscope-*.jsonl 2>/dev/null | wc -l)
if [ "$records" -eq 2 ] && [ -n "$child" ] && [ -s "$SCRATCH/hand/exitscope-$child.jsonl" ]; then
  ok "by hand: records of the shell and of its exec'd child in the working directory"
else
  fail "by hand: records of the shell and of its exec'd child in the working directory" \
    "child pid '$child'; files: $(ls "$SCRATCH/hand" | tr '\n' ' ')" "$(head -c 1500 "$SCRATCH/hand.err")"
fi
# the parent's last record: its calls took time (a clock that stands still
# would give 0 ns for every call)
parent=$(cd "$SCRATCH/hand" && ls exitscope-*.jsonl | grep -v "exitscope-$child.jsonl" | sed 's/exitscope-\(.*\)\.jsonl/\1/')
ns=$(last_record "$SCRATCH/hand" "$parent" 2>/dev/null | grep -o '"wait4": *{[^}]*}' | head -n 1 | grep -o '"ns": *[0-9]*' | tr -dc 0-9)
if [ -n "$ns" ] && [ "$ns" -ge 50000000 ]; then ok "by hand: the parent's wait4 took the child's 50 ms sleep ($ns ns)"
else fail "by hand: the parent's wait4 took the child's 50 ms sleep" "wait4 ns '$ns'" "$(last_record "$SCRATCH/hand" "$parent" | head -c 1500)"; fi
