#!/usr/bin/env bash
# t630: counts that agree, the gramine format, records that are valid JSON.
#  - faults and preemptions: one definition at every level (see windows.c):
#    in every record the threads' windows add up to the process's window;
#    per process the windows add up to the last total; per thread its
#    windows add up to its total; the threads' last totals (live, exited,
#    reclaimed) add up to the process total, per image of an exec; checked
#    on sqlite3, python3 with threads and subprocesses, and th_cnt_faults
#    (threads, reclaimed threads, fork, exec);
#  - --format gramine: the exit block prints the process totals where
#    Gramine prints them; window blocks say which window (golden text);
#  - hostile bytes in labels and thread names: every record line loads in
#    python3's json and in jq, and the label comes back recognisable.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
ulimit -c 0

# FAULTS_JQ: over the slurped records of one process, one line per violation
# of the definition, for minor_faults, major_faults and preemptions. An exec
# starts a new image: its threads count from zero again and the process
# total carries the images before it.
# shellcheck disable=SC2016 # a jq program, not shell
FAULTS_JQ='
def keys3: ["minor_faults", "major_faults", "preemptions"];
def vec(c): c as $c | reduce keys3[] as $k ({}; .[$k] = ($c[$k] // 0));
def sum(s): reduce s as $v ({minor_faults: 0, major_faults: 0, preemptions: 0};
                            .minor_faults += $v.minor_faults | .major_faults += $v.major_faults
                            | .preemptions += $v.preemptions);
def diff(a; b; what): keys3[] as $k | select(a[$k] != b[$k]) | "\(what) \($k): \(a[$k]) vs \(b[$k])";
. as $r | $r[-1] as $last |
  # images: a record with reason exec ends one
  (reduce range(0; $r | length) as $i ([[]];
     .[-1] += [$i] | if $r[$i].reason == "exec" and $i < ($r | length) - 1 then . + [[]] else . end)) as $images |
  ($r[] | diff(sum(.threads[] | vec(.window)); vec(.window);
               "record \(.seq) (\(.label // .reason)): threads'"'"' windows vs the process window:")),
  diff(sum($r[] | vec(.window)); vec($last.total); "process: sum of windows vs last total:"),
  (range(0; $images | length) as $m | [$images[$m][] | $r[.]] as $img
   | ($img | [.[] | .threads[]] | group_by(.tid)) as $groups
   | ($groups[] | diff(sum(.[] | vec(.window)); vec(.[-1].total);
                       "image \($m) thread \(.[0].tid): sum of windows vs its total:")),
     diff(sum(($groups[] | vec(.[-1].total)),
              (if $m > 0 then vec($r[$images[$m - 1][-1]].total) else empty end));
          vec($img[-1].total);
          "image \($m): threads'"'"' last totals (+ earlier images) vs the process total:"))'

# check_faults NAME FILE: ok when FAULTS_JQ finds nothing in FILE.
check_faults() {
  local out
  if [ ! -s "$2" ]; then fail "$1" "no records in '$2'"; return; fi
  if ! out=$(jq -sr "$FAULTS_JQ" "$2" 2>&1); then fail "$1" "jq failed: $out"; return; fi
  if [ -z "$out" ]; then ok "$1"; else mapfile -t lines < <(head -n 20 <<<"$out"); fail "$1" "${lines[@]}"; fi
}

# check_faults_dir NAME DIR: check_faults for every record file in DIR.
check_faults_dir() {
  local f n=0
  for f in "$2"/exitscope-*.jsonl; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    check_faults "$1: $(basename "$f")" "$f"
  done
  [ "$n" -gt 0 ] || fail "$1" "no record files in '$2'"
}

# total FILE FILTER: FILTER on the last record of FILE.
last() { tail -n 1 "$1" | jq -r "$2" 2>/dev/null; }

# ---------------------------------------------------------------------------
# Faults: sqlite3, one thread. The process is its only thread.
dir=$SCRATCH/sqlite
mkdir -p "$dir"
"$XS" run -o "$dir" --format none -- sqlite3 :memory: 'select 1;' >/dev/null 2>"$dir.err"
file=$(ls "$dir"/exitscope-*.jsonl 2>/dev/null | head -n 1)
check_faults "faults: sqlite3" "$file"
expect_eq "faults: sqlite3: the only thread's minor faults are the process's" \
  "$(last "$file" '.total.minor_faults')" "$(last "$file" '[.threads[].total.minor_faults] | add')"

# python3 with threads and subprocesses (fork/vfork + exec), closing windows
# with --interval while threads work.
dir=$SCRATCH/python
mkdir -p "$dir"
"$XS" run -o "$dir" --format none --interval 50 -- python3 -c '
import threading, subprocess
def work(n):
    b = []
    for i in range(n):
        b.append(bytearray(4096 * 16))
    subprocess.run(["true"])
ts = [threading.Thread(target=work, args=(200 + 50 * i,)) for i in range(4)]
for t in ts: t.start()
for t in ts: t.join()
' >/dev/null 2>"$dir.err"
check_faults_dir "faults: python3 threads" "$dir"

# th_cnt_faults: live, exited and reclaimed threads; a fork child; an exec.
for mode in plain fork exec; do
  dir=$SCRATCH/th-$mode
  mkdir -p "$dir"
  arg=$mode; [ "$mode" = plain ] && arg=
  timeout -k 5 120 "$XS" run -o "$dir" --format none -- "$T/th_cnt_faults" $arg >"$dir.out" 2>"$dir.err"
  expect_eq "faults: th_cnt_faults $mode: exit status" 0 "$?"
  check_faults_dir "faults: th_cnt_faults $mode" "$dir"
  main=$(awk '$1 == "main" { print $2; exit }' "$dir.out")
  file=$dir/exitscope-$main.jsonl
  # not vacuous: the workers' pages are in the counts, and the burst's
  # threads are listed (reclaimed ones among them)
  n=$(last "$file" '.total.minor_faults')
  if [ "${n:-0}" -ge 440 ]; then ok "faults: th_cnt_faults $mode: the workers' faults are counted ($n)"
  else fail "faults: th_cnt_faults $mode: the workers' faults are counted" "minor faults: ${n:-none}"; fi
  n=$(jq -s '[.[] | select(.label == "burst") | .threads[]] | length' "$file" 2>/dev/null)
  if [ "${n:-0}" -ge 1100 ]; then ok "faults: th_cnt_faults $mode: the burst's threads are listed ($n)"
  else fail "faults: th_cnt_faults $mode: the burst's threads are listed" "threads: ${n:-none}"; fi
done
n=$(jq -s '[.[] | select(.reason == "exec")] | length' "$SCRATCH/th-exec/exitscope-$(awk '$1 == "main" { print $2; exit }' "$SCRATCH/th-exec.out").jsonl" 2>/dev/null)
expect_eq "faults: th_cnt_faults exec: one exec record" 1 "$n"

# ---------------------------------------------------------------------------
# --format gramine. gramine_blocks LOG: one line per block,
# "WHICH enters exits aexs sync async", WHICH being the window number or
# "total".
gramine_blocks() {
  awk '/^----- exitscope window #/ { sub(/^----- exitscope window #/, ""); which = $1 + 0; n = 0; next }
       /^----- Total SGX stats for process / { which = "total"; n = 0; next }
       /^  # of (EENTERs|EEXITs|AEXs|sync signals|async signals): +[0-9]+$/ {
         v[n++] = $NF; if (n == 5) print which, v[0], v[1], v[2], v[3], v[4] }' "$1"
}
# the same from the records: window blocks for every window but a lone exit
# window, the total for the exit
GRAMINE_JQ='def g(c): "\(c.enters) \(c.exits) \(c.preemptions + c.minor_faults + c.major_faults) \(c.sync_signals) \(c.async_signals)";
  . as $r | ($r[] | select(.reason != "exit" or ($r | length) > 1) | "\(.seq) \(g(.window))"),
  ($r[] | select(.reason == "exit") | "total \(g(.total))")'
# normalized: the process id, the counts and the seconds replaced
gramine_shape() {
  sed -E -e 's/process [0-9]+/process PID/' -e 's/:( +)[0-9]+$/:\1N/' -e 's/[0-9]+\.[0-9]{3} s\)/S s)/' "$1"
}

dir=$SCRATCH/gramine
mkdir -p "$dir"
timeout -k 5 120 "$XS" run -o "$dir" --format gramine -- "$T/th_cnt_faults" >"$dir.out" 2>"$dir.log"
file=$dir/exitscope-$(awk '$1 == "main" { print $2; exit }' "$dir.out").jsonl
expect_eq "gramine: each block holds its window's counts, the Total block the process totals" \
  "$(jq -sr "$GRAMINE_JQ" "$file" 2>&1)" "$(gramine_blocks "$dir.log")"
expect_eq "gramine: the Total block is the last record's total (EEXITs)" \
  "$(last "$file" .total.exits)" "$(sed -n '/^----- Total SGX/,$ s/^  # of EEXITs: *//p' "$dir.log")"
gramine_shape "$dir.log" >"$dir.shape"
check "gramine: golden text of a run with windows (tests/golden/t630-gramine-windows.txt)" \
  diff -u "$XS_ROOT/tests/golden/t630-gramine-windows.txt" "$dir.shape"

dir=$SCRATCH/gramine-one
mkdir -p "$dir"
"$XS" run -o "$dir" --format gramine -- sqlite3 :memory: 'select 1;' >/dev/null 2>"$dir.log"
file=$(ls "$dir"/exitscope-*.jsonl 2>/dev/null | head -n 1)
expect_eq "gramine: a single window prints only the Total block, with the totals" \
  "$(jq -sr "$GRAMINE_JQ" "$file" 2>&1)" "$(gramine_blocks "$dir.log")"
gramine_shape "$dir.log" >"$dir.shape"
check "gramine: golden text of a single window (tests/golden/t630-gramine-one.txt)" \
  diff -u "$XS_ROOT/tests/golden/t630-gramine-one.txt" "$dir.shape"

# ---------------------------------------------------------------------------
# Hostile labels and thread names: every line loads in strict parsers.
dir=$SCRATCH/names
mkdir -p "$dir"
timeout -k 5 60 "$XS" run -o "$dir" -- "$T/th_cnt_names" >"$dir.out" 2>"$dir.log"
expect_eq "names: every mark returned 0" "marks=0" "$(grep '^marks=' "$dir.out")"
file=$dir/exitscope-$(awk '$1 == "main" { print $2; exit }' "$dir.out").jsonl
check "names: python3's json loads every line" \
  python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]' "$file"
check "names: jq loads every line" jq -e . "$file"
# the labels as Python reads them: bytes that are not UTF-8 are the
# characters of the same number, so latin-1 gives the bytes back
expect_eq "names: labels come back recognisable (bytes not UTF-8 as U+00XX)" \
  "['ÿþ', 'a\\x01b', 'À\\x80', 'surí\\xa0\\x80rogate', 'cutâ\\x82', 'q\"uo\\\\te', '$(printf '€%.0s' $(seq 42))', None]" \
  "$(python3 -c 'import json,sys; print([json.loads(l)["label"] for l in open(sys.argv[1])])' "$file" 2>&1)"
expect_eq "names: thread names come back recognisable" \
  "['ÿÿ main þ', 'w\\x01À\\x80ÿ']" \
  "$(python3 -c 'import json,sys; print([t["comm"] for t in json.loads(open(sys.argv[1]).readline())["threads"]])' "$file" 2>&1)"
check "names: the log's text is valid UTF-8" python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$dir.log"
check "names: exitscope report reads the records" "$XS" report "$file"
check "names: exitscope report --json writes valid JSON" \
  bash -c '"$1" report --json "$2" | python3 -c "import json,sys; json.loads(sys.stdin.buffer.read().decode())"' _ "$XS" "$file"
check "names: exitscope diff --json writes valid JSON" \
  bash -c '"$1" diff --json "$2:0" "$2:3" | python3 -c "import json,sys; json.loads(sys.stdin.buffer.read().decode())"' _ "$XS" "$file"
