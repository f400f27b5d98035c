#!/usr/bin/env bash
# t210: exitscope flame. Golden tests for the folding and the diff
# arithmetic on small hand-made inputs in tests/golden/flame/:
#   - script.txt is perf script output (call chains, inlined frames, a
#     sample without a call chain, thread names with spaces and digits,
#     an unknown frame, and the leaf perf's DWARF unwinding repeats after a
#     syscall in glibc's write, which is dropped), fed through the real perf path by a stand-in perf
#     (fake-perf, via $PERF) for a minimal valid perf.data header;
#   - base.folded / new.folded (40 and 100 samples) check the normalised
#     diff: every share and change is checked by hand below too;
#   - truncated, foreign and corrupt inputs must name the file and position.
# Then a real profile of tp_hot through the real perf: the hot functions
# and thread names appear with the right shares, and the SVG is well-formed
# XML that carries its script and no external reference.
# Regenerate goldens after an intended change:
#   XS_GOLDEN_UPDATE=1 bash tests/integration/t210-flame.sh
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
G=$XS_ROOT/tests/golden/flame
export XS_FAKE_SCRIPT=script.txt

# --- folding perf script text ---
PERF=./fake-perf golden flame-script-folded flame --folded empty-header.data
PERF=./fake-perf golden flame-script-threads flame --folded --per-thread empty-header.data
PERF=./fake-perf golden flame-script-frames flame --frames empty-header.data
# --- the diff arithmetic ---
golden flame-diff-frames flame --diff --frames base.folded new.folded
golden flame-diff-folded flame --diff --folded base.folded new.folded
golden flame-folded-roundtrip flame --folded new.folded
# --- bad input: the file and the position ---
golden err-flame-truncated flame truncated.data
golden err-flame-foreign   flame foreign.data
golden err-flame-corrupt   flame --folded corrupt.folded
golden err-flame-missing   flame missing.data
golden err-flame-no-args   flame
golden err-flame-diff-one  flame --diff base.folded
PERF=/bin/false golden err-flame-perf-fails flame empty-header.data
PERF=/nonexistent/perf golden err-flame-no-perf flame empty-header.data
[ -n "${XS_GOLDEN_UPDATE:-}" ] && exit 0

# The diff's numbers by hand: BASE 40 = parse 30 + write 10; NEW 100 =
# parse 20 + write 60 + compress 20. Shares: parse 75% -> 20% (-55 points),
# write_out 25% -> 60% (+35), compress 0 -> 20% (+20), main 100 -> 100 (0).
frames=$(cd "$G" && "$XS" flame --diff --frames base.folded new.folded)
row() { printf '%s\n' "$frames" | awk -F'\t' -v p="$1" '$1 == p { print $2, $3, $4, $5, $6 }'; }
expect_eq "diff: parse 30 -> 20 samples, 75% -> 20%, -55 points" "30 20 75.0000 20.0000 -55.0000" "$(row 'main [prog];parse [prog]')"
expect_eq "diff: write_out 25% -> 60%, +35 points" "10 60 25.0000 60.0000 35.0000" "$(row 'main [prog];write_out [prog]')"
expect_eq "diff: compress new, +20 points" "0 20 0.0000 20.0000 20.0000" "$(row 'main [prog];compress [prog]')"
expect_eq "diff: the root frame unchanged" "40 100 100.0000 100.0000 0.0000" "$(row 'main [prog]')"

# The diff SVG: sized by NEW (compress is drawn, 20% wide), coloured by change.
(cd "$G" && "$XS" flame --diff base.folded new.folded -o "$SCRATCH/diff.svg") 2>/dev/null
/usr/bin/python3 - "$SCRATCH/diff.svg" >"$SCRATCH/diff.check" 2>&1 <<'PY'
import re, sys, xml.etree.ElementTree as ET
ns = {'s': 'http://www.w3.org/2000/svg'}
root = ET.parse(sys.argv[1]).getroot()
width = float(root.get('data-width')) - 2 * float(root.get('data-pad'))
for g in root.iter('{http://www.w3.org/2000/svg}g'):
    if g.get('class') != 'fr':
        continue
    rect = g.find('s:rect', ns)
    print(g.get('data-l'), round(float(rect.get('width')) / width, 3), rect.get('fill'))
PY
grep -q '^compress \[prog\] 0.2 rgb(255,' "$SCRATCH/diff.check" &&
  grep -q '^parse \[prog\] 0.2 rgb(' "$SCRATCH/diff.check" &&
  ! grep -q '^parse \[prog\] 0.2 rgb(255,' "$SCRATCH/diff.check" &&
  grep -q '^write_out \[prog\] 0.6 rgb(255,' "$SCRATCH/diff.check"
check_rc=$?
if [ $check_rc -eq 0 ]; then ok "diff SVG: widths are NEW's shares, growth red, shrink not red"
else fail "diff SVG: widths are NEW's shares, growth red, shrink not red" "$(cat "$SCRATCH/diff.check")"; fi

# --- a real profile through the real perf ---
if ! command -v perf >/dev/null; then
  fail "perf is installed (apt-get install linux-perf; .ci/run does)"
  exit 0
fi
mkdir -p "$SCRATCH/p"
"$XS" run -o "$SCRATCH/p" -p --format none -- "$T/tp_hot" phases 2 300 >"$SCRATCH/p.out" 2>&1
j=("$SCRATCH"/p/exitscope-*.jsonl); pid=${j[0]##*/exitscope-}; pid=${pid%.jsonl}
data=$SCRATCH/p/exitscope-$pid-1.data
"$XS" flame --frames --per-thread "$data" >"$SCRATCH/frames" 2>"$SCRATCH/frames.err"
expect_eq "real profile: flame --frames exits 0" "0" "$?"
share() {  # share NAME: percent of samples whose stack goes through NAME (counted once per path)
  awk -F'\t' -v n="$1" '
    { k = split($1, f, ";"); }
    k == 1 { total += $2 }
    { leaf = f[k]; sub(/ \[.*$/, "", leaf); if (leaf == n) s += $2 }
    END { if (total) printf "%.0f\n", 100 * s / total; else print "none" }' "$SCRATCH/frames"
}
main_share=$(share main_phase1) worker_share=$(share worker_phase1)
# each thread burns the same CPU time in its phase function: about half each
if [ "$main_share" != none ] && [ "$main_share" -ge 35 ] && [ "$main_share" -le 65 ] &&
   [ "$worker_share" -ge 35 ] && [ "$worker_share" -le 65 ]; then
  ok "real profile: main_phase1 $main_share% and worker_phase1 $worker_share% of window 1"
else
  fail "real profile: main_phase1 and worker_phase1 near half each" "main_phase1 $main_share% worker_phase1 $worker_share%" "$(head -20 "$SCRATCH/frames")"
fi
grep -q '^xs-hotworker \[thread\];.*worker_phase1 \[tp_hot\]	' "$SCRATCH/frames" &&
  grep -q '^tp_hot \[thread\];.*main_phase1 \[tp_hot\]	' "$SCRATCH/frames"
expect_eq "real profile: each phase function under its own thread" 0 "$?"
if grep -q 'main_phase0\|worker_phase0' "$SCRATCH/frames"; then
  fail "real profile: window 1 holds nothing of phase 0"
else ok "real profile: window 1 holds nothing of phase 0"; fi

"$XS" flame "$data" -o "$SCRATCH/one.svg" 2>"$SCRATCH/one.err"
expect_eq "real profile: flame writes the SVG" 0 "$?"
grep -q "^exitscope: wrote '$SCRATCH/one.svg' ([0-9]* samples)$" "$SCRATCH/one.err"
expect_eq "real profile: flame says what it wrote" 0 "$?"
if /usr/bin/python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$SCRATCH/one.svg" 2>"$SCRATCH/xml.err"; then
  ok "real profile: the SVG is well-formed XML"
else fail "real profile: the SVG is well-formed XML" "$(cat "$SCRATCH/xml.err")"; fi
if grep -q 'xsFlame' "$SCRATCH/one.svg" && ! grep -Eq '(href|src)="(https?:|//)' "$SCRATCH/one.svg"; then
  ok "real profile: the SVG carries its script and fetches nothing"
else fail "real profile: the SVG carries its script and fetches nothing"; fi

# default output name, and an unwritable output loses nothing else
cp "$data" "$SCRATCH/w1.data"
"$XS" flame "$SCRATCH/w1.data" 2>/dev/null
if [ -s "$SCRATCH/w1.svg" ]; then ok "flame FILE.data writes FILE.svg by default"; else fail "flame FILE.data writes FILE.svg by default"; fi
"$XS" flame "$data" -o /nonexistent/dir/x.svg 2>"$SCRATCH/unwritable.err"
expect_eq "unwritable output: status 1" 1 "$?"
expect_eq "unwritable output: says so" "exitscope: cannot create '/nonexistent/dir/x.svg': No such file or directory" "$(cat "$SCRATCH/unwritable.err")"
if [ -e /dev/full ]; then
  "$XS" flame "$data" -o /dev/full 2>"$SCRATCH/full.err"
  expect_eq "full disk (/dev/full): status 1" 1 "$?"
  grep -q "cannot write '/dev/full': No space left on device" "$SCRATCH/full.err"
  expect_eq "full disk (/dev/full): says so" 0 "$?"
fi

# --- report --html with a profile that is gone: a warning and a note, the rest is there ---
rm -f "$SCRATCH/p/exitscope-$pid-0.data"
"$XS" report --html "$SCRATCH/p/exitscope-$pid.jsonl" -o "$SCRATCH/gone.html" 2>"$SCRATCH/gone.err"
expect_eq "report --html with a missing profile: status 0" 0 "$?"
grep -q "^exitscope: warning: cannot read profile 'exitscope-$pid-0.data' of window 0 ('$SCRATCH/p/exitscope-$pid.jsonl' line 1): No such file or directory; reported without it$" "$SCRATCH/gone.err"
expect_eq "report --html with a missing profile: warns, naming the file and window" 0 "$?"
flames=$(grep -c '<svg xmlns="http://www.w3.org/2000/svg" class="xs-flame"' "$SCRATCH/gone.html")
notes=$(grep -c 'profile not readable: No such file or directory' "$SCRATCH/gone.html")
# (a window whose profile has no sample gets "no samples in this window", not a graph)
expect_eq "report --html with a missing profile: the other windows' flame graphs and one note" \
  "$(jq -s '[.[] | select(.seq != 0 and .profile != null and .profile.samples > 0)] | length' "$SCRATCH/p/exitscope-$pid.jsonl") 1" "$flames $notes"
