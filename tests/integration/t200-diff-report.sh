#!/usr/bin/env bash
# t200: exitscope diff and report. Golden tests: the hand-made record files
# in tests/golden/*.jsonl go through diff and report, and stdout, stderr and
# the exit status must match tests/golden/NAME.{out,err,status} exactly
# (text and JSON formats, the corrupt-line warnings, the error messages and
# statuses). Then two real runs of tt_count_getppid with different counts:
# the diff must report exactly the difference in getppid calls.
#
# After an intended format change, regenerate the expected files with
#   XS_GOLDEN_UPDATE=1 bash tests/integration/t200-diff-report.sh
# and review the change with git diff tests/golden/.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
G=$XS_ROOT/tests/golden
XS=$(cd "$(dirname "$XS")" && pwd)/$(basename "$XS")	# golden() runs it from $G

# --- diff: text ---
golden diff-last          diff run1.jsonl run2.jsonl
golden diff-seq           diff run1.jsonl:1 run2.jsonl:-2
golden diff-total         diff --total run1.jsonl:-1 run2.jsonl
golden diff-same-run      diff run1.jsonl:0 run1.jsonl:1
golden diff-extremes      diff extremes.jsonl:0 extremes.jsonl:1
# --- diff: JSON ---
golden diff-json          diff --json run1.jsonl:1 run2.jsonl:1
golden diff-json-extremes diff --json --total extremes.jsonl:0 extremes.jsonl
# --- report ---
golden report-run1        report run1.jsonl
golden report-run2        report run2.jsonl
golden report-extremes    report extremes.jsonl
golden report-json        report --json run1.jsonl
golden report-corrupt     report corrupt.jsonl
golden report-corrupt-json report --json corrupt.jsonl
golden report-compare     report --compare 0,2 run1.jsonl
golden err-report-compare-seq report --compare 0,9 run1.jsonl
golden err-report-compare-arg report --compare 0 run1.jsonl
golden err-report-html-json report --html --json run1.jsonl
# --- errors: message and status ---
golden err-diff-no-args   diff
golden err-diff-one-arg   diff run1.jsonl
golden err-diff-option    diff --frobnicate run1.jsonl run2.jsonl
golden err-diff-bad-seq   diff run1.jsonl:abc run2.jsonl
golden err-diff-minus-0   diff run1.jsonl:-0 run2.jsonl
golden err-diff-missing   diff missing.jsonl run2.jsonl
golden err-diff-no-seq    diff run1.jsonl:7 run2.jsonl
golden err-diff-too-far   diff run1.jsonl:-4 run2.jsonl
golden err-diff-too-far2  diff run1.jsonl run2.jsonl:-4
golden err-diff-corrupt   diff corrupt.jsonl:0 run2.jsonl
golden err-diff-dir       diff . run2.jsonl
golden err-diff-empty     diff /dev/null run2.jsonl
golden err-report-no-args report
golden err-report-missing report missing.jsonl
golden err-report-empty   report /dev/null

[ -n "${XS_GOLDEN_UPDATE:-}" ] && exit 0

# --- the JSON outputs are valid JSON ---
if command -v jq >/dev/null; then
  for args in "diff --json run1.jsonl:1 run2.jsonl" "diff --json --total extremes.jsonl:0 extremes.jsonl" \
              "report --json run1.jsonl" "report --json corrupt.jsonl" "report --json extremes.jsonl"; do
    # shellcheck disable=SC2086
    check "JSON output of '$args' parses with jq" sh -c "cd '$G' && '$XS' $args 2>/dev/null | jq -e ."
  done
  expect_eq "report --json lists every record of run1" "0 1 2" \
    "$(cd "$G" && "$XS" report --json run1.jsonl | jq -r '[.windows[].seq] | join(" ")')"
  expect_eq "report --json names the skipped lines of corrupt.jsonl" "2 4 5 6" \
    "$(cd "$G" && "$XS" report --json corrupt.jsonl 2>/dev/null | jq -r '.skipped_lines | join(" ")')"
fi

# --- a truncated last line (a writer killed mid-line) is skipped by report ---
head -c -40 "$G/run1.jsonl" >"$SCRATCH/truncated.jsonl"
"$XS" report "$SCRATCH/truncated.jsonl" >"$SCRATCH/trunc.out" 2>"$SCRATCH/trunc.err"
expect_eq "report on a truncated file: status 0" 0 "$?"
expect_eq "report on a truncated file: two windows and the total" 3 \
  "$(grep -cE '^ +[01] |^total' "$SCRATCH/trunc.out")"
if grep -q "^exitscope: warning: '.*truncated.jsonl': line 3, byte [0-9]*: .*; line skipped\$" "$SCRATCH/trunc.err"; then
  ok "report on a truncated file: warns about line 3"
else fail "report on a truncated file: warns about line 3" "$(cat "$SCRATCH/trunc.err")"; fi

# --- two real runs: the diff holds exactly the difference ---
real_run() {
  local dir=$SCRATCH/$1; shift
  mkdir -p "$dir"
  timeout -k 5 60 "$XS" run -o "$dir" -- "$T/tt_count_getppid" "$@" >"$dir.stdout" 2>"$dir.stderr" </dev/null
  local f=("$dir"/exitscope-*.jsonl)
  echo "${f[0]}"
}
A=$(real_run small 1000)
B=$(real_run large 4500)
if [ -s "$A" ] && [ -s "$B" ]; then ok "two real runs wrote their records"
else fail "two real runs wrote their records" "$(cat "$SCRATCH/small.stderr" "$SCRATCH/large.stderr")"; fi

"$XS" diff "$A" "$B" >"$SCRATCH/real.out" 2>"$SCRATCH/real.err"
expect_eq "diff of two real runs: status 0" 0 "$?"
# getppid changes most, so its block comes first
expect_eq "diff of two real runs: getppid first, 1000 -> 4500, +3500" \
  "getppid calls 1000 4500 +3500 4.500" \
  "$(awk '$2 == "calls" {print $1, $2, $3, $4, $5, $6; exit}' "$SCRATCH/real.out")"
expect_eq "diff of two real runs: exits +3500" "+3500" \
  "$(awk '$1 == "exits" {print $4}' "$SCRATCH/real.out")"
expect_eq "diff of two real runs: write unchanged" "1 1 0" \
  "$(awk '$1 == "write" {print $3, $4, $5}' "$SCRATCH/real.out")"

if command -v jq >/dev/null; then
  expect_eq "diff --json of two real runs: getppid calls" "1000 4500 3500 both" \
    "$("$XS" diff --json "$A" "$B" | jq -r '.syscalls[] | select(.name == "getppid") | "\(.calls.a) \(.calls.b) \(.calls.delta) \(.status)"')"
  expect_eq "diff --json --total of two real runs agrees with the records" \
    "$(jq -r '.total.exits' "$B" | tail -n 1)" \
    "$("$XS" diff --json --total "$A" "$B" | jq -r '.scalars.exits.b')"
  expect_eq "diff of a real record with itself: no delta anywhere" "0" \
    "$("$XS" diff --json "$A" "$A" | jq '[.scalars[].delta, (.syscalls[] | .calls.delta, .errors.delta, .ns.delta)] | map(select(. != 0)) | length')"
fi

"$XS" report "$B" >"$SCRATCH/real-report.out" 2>"$SCRATCH/real-report.err"
expect_eq "report of a real run: status 0, nothing on stderr" "0 " "$? $(cat "$SCRATCH/real-report.err")"
expect_eq "report of a real run: one exit window with getppid=4500 on top" "exit getppid=4500" \
  "$(awk '$1 == "0" {print $2, $12}' "$SCRATCH/real-report.out")"

# --- report --html skips a corrupt line with a warning and reports the rest ---
(cd "$G" && "$XS" report --html corrupt.jsonl -o "$SCRATCH/corrupt.html") 2>"$SCRATCH/corrupt-html.err"
expect_eq "report --html corrupt.jsonl: status 0" 0 "$?"
expect_eq "report --html corrupt.jsonl: the same warnings as the text report" \
  "$(cd "$G" && "$XS" report corrupt.jsonl 2>&1 >/dev/null)" "$(grep -v '^exitscope: wrote' "$SCRATCH/corrupt-html.err")"
expect_eq "report --html corrupt.jsonl: one table row per valid record" \
  "$(cd "$G" && "$XS" report --json corrupt.jsonl 2>/dev/null | jq '.windows | length')" \
  "$(grep -c '^<tr data-seq=' "$SCRATCH/corrupt.html")"
grep -q 'corrupt lines skipped\|corrupt line skipped' "$SCRATCH/corrupt.html"
expect_eq "report --html corrupt.jsonl: the page says lines were skipped" 0 "$?"
