#!/usr/bin/env bash
# t410: the profiler end to end. `exitscope run -p` on real programs, its
# perf.data files read by the real perf (Debian's perf 6.1):
#   - tests/targets/tp_hot: known hot functions in the main thread and in a
#     named worker, one phase per window, in dwarf and fp modes: clean
#     perf report/script, names, thread names, call chains to main / the
#     thread start, the per-window split, nothing charged to the runtime;
#   - sample accounting over ten fast rotations; SIGKILL mid-window; fork;
#     short-lived exec'd images; python3 and sqlite3;
#   - bad options, a full output directory, and no spurious EINTR
#     (tests/targets/tp_eintr) while the sampler runs.
. "$(dirname "$0")/../lib.sh"

for tool in perf jq; do
  if ! command -v "$tool" >/dev/null; then
    fail "$tool is installed" "t410 needs $tool"
    exit 0
  fi
done
cd "$SCRATCH" || exit 1
HOT=$T/tp_hot

# flat DATA: one line per sample, "COMM|frame;frame;..." innermost first
# (function names without offsets; "[unknown]" as perf prints it).
flat() {
  perf script -i "$1" 2>/dev/null | awk '
    /^\t/ { s = $2; sub(/\+0x[0-9a-f]+$/, "", s); line = line s ";"; next }
    /^[ \t]*$/ { next }
    { if (have) print line; line = $1 "|"; have = 1 }
    END { if (have) print line }'
}

# nsamples DATA: the samples perf script reads.
nsamples() { flat "$1" | wc -l; }

# count_chain FLATFILE COMM REGEX: samples of thread COMM whose chain
# (";"-joined frames) matches REGEX.
count_chain() { awk -F'|' -v c="$2" -v re="$3" '$1 == c && (";" $2) ~ re { n++ } END { print n + 0 }' "$1"; }

# perf_clean DATA SAMPLES: "" when perf report and perf script read DATA
# with nothing on stderr (a file of 0 samples: perf report's only complaint
# may be "has no samples"), else the complaint.
perf_clean() {
  local d=$1 want=$2 err
  perf report --stdio -i "$d" >"$SCRATCH/.rep" 2>"$SCRATCH/.rep.err"
  err=$(cat "$SCRATCH/.rep.err")
  if [ "$want" = 0 ]; then err=$(grep -v -e '^Error:$' -e 'has no samples!$' <<<"$err"); fi
  [ -n "$err" ] && { echo "perf report -i $d: $(head -c 600 <<<"$err")"; return; }
  perf script -i "$d" >/dev/null 2>"$SCRATCH/.scr.err"
  [ -s "$SCRATCH/.scr.err" ] && echo "perf script -i $d: $(head -c 600 "$SCRATCH/.scr.err")"
}

# one_sample FLATFILE COMM REGEX: for diagnostics.
one_sample() { awk -F'|' -v c="$2" -v re="$3" '$1 == c && (re == "" || (";" $2) ~ re) { print; exit }' "$1"; }

# ---- tp_hot phases, dwarf and fp: 3 phases, one per window ----
PHASES=3
for mode in dwarf fp; do
  out=$SCRATCH/ph-$mode; mkdir -p "$out"
  "$XS" run -o "$out" -p -g "$mode" --format none -- "$HOT" phases $PHASES 300 >"$out.stdout" 2>"$out.stderr"
  rc=$?
  pid=$(jq -r '.pid' "$out"/exitscope-*.jsonl 2>/dev/null | head -n 1)
  if [ $rc = 0 ] && [ "$(cat "$out.stdout")" = "phases $PHASES marks OK" ] && [ -n "$pid" ]; then
    ok "$mode: tp_hot phases runs under -p (status 0, marks OK)"
  else
    fail "$mode: tp_hot phases runs under -p (status 0, marks OK)" "status $rc" "$(cat "$out.stdout" "$out.stderr")"
    continue
  fi
  jsonl=$out/exitscope-$pid.jsonl
  problems=() ; split=() ; chains=() ; names=() ; runtime=()
  for k in $(seq 0 $PHASES); do
    file=$(jq -r --argjson k "$k" 'select(.seq == $k) | .profile.file // empty' "$jsonl")
    want=$(jq -r --argjson k "$k" 'select(.seq == $k) | .profile.samples // empty' "$jsonl")
    if [ "$file" != "exitscope-$pid-$k.data" ] || [ ! -f "$out/$file" ]; then
      problems+=("window $k: record names '$file', expected exitscope-$pid-$k.data (present)")
      continue
    fi
    c=$(perf_clean "$out/$file" "$want"); [ -n "$c" ] && problems+=("$c")
    flat "$out/$file" >"$out/$k.flat"
    got=$(wc -l <"$out/$k.flat")
    [ "$got" = "$want" ] || problems+=("window $k: perf script reads $got samples, the record says $want")
    n_rt=$(grep -c 'xs_[a-z_]*;\|xs_restorer' "$out/$k.flat")
    [ "$n_rt" = 0 ] || runtime+=("window $k: $n_rt of $got samples charged to the runtime, e.g. $(grep -m1 'xs_[a-z_]*;' "$out/$k.flat")")
    [ "$k" = $PHASES ] && continue
    # names with the right threads, and chains to main / the thread start
    m_self=$(count_chain "$out/$k.flat" tp_hot "^;main_phase$k;")
    w_self=$(count_chain "$out/$k.flat" xs-hotworker "^;worker_phase$k;")
    [ "$m_self" -gt 0 ] && [ "$w_self" -gt 0 ] ||
      names+=("window $k: samples with main_phase$k as leaf in thread tp_hot: $m_self; worker_phase$k in xs-hotworker: $w_self")
    m_chain=$(count_chain "$out/$k.flat" tp_hot ";main_phase$k;(.*;)?run_phases;(.*;)?main;")
    w_chain=$(count_chain "$out/$k.flat" xs-hotworker ";worker_phase$k;(.*;)?worker_main;")
    [ "$m_chain" -gt 0 ] && [ "$w_chain" -gt 0 ] ||
      chains+=("window $k: main_phase$k..run_phases..main in tp_hot: $m_chain; worker_phase$k..worker_main in xs-hotworker: $w_chain" \
               "  e.g. $(one_sample "$out/$k.flat" tp_hot "main_phase$k")" "  e.g. $(one_sample "$out/$k.flat" xs-hotworker "worker_phase$k")")
    # the split: phase k's functions only in window k
    grep -E '(main|worker)_phase[0-9];' "$out/$k.flat" | grep -vE "(main|worker)_phase$k;" >"$out/$k.others"
    others=$(wc -l <"$out/$k.others")
    [ "$others" = 0 ] || split+=("window $k: $others samples of another phase, e.g. $(head -n 1 "$out/$k.others")")
    if [ "$mode" = dwarf ]; then
      # dwarf unwinds through libc up to _start / the clone
      full=$(count_chain "$out/$k.flat" tp_hot ";main_phase$k;.*;main;(.*;)?_start;$")
      [ "$full" -gt 0 ] || chains+=("window $k: no main-thread chain reaches _start: $(one_sample "$out/$k.flat" tp_hot "main_phase$k")")
    fi
  done
  if [ ${#problems[@]} = 0 ]; then ok "$mode: every window's file opens in perf report and perf script without warnings, samples as recorded"
  else fail "$mode: every window's file opens in perf report and perf script without warnings, samples as recorded" "${problems[@]}"; fi
  if [ ${#names[@]} = 0 ]; then ok "$mode: hot functions show by name in the right threads (tp_hot, xs-hotworker)"
  else fail "$mode: hot functions show by name in the right threads (tp_hot, xs-hotworker)" "${names[@]}"; fi
  if [ ${#chains[@]} = 0 ]; then ok "$mode: call chains reach main and the thread start function"
  else fail "$mode: call chains reach main and the thread start function" "${chains[@]}"; fi
  if [ ${#split[@]} = 0 ]; then ok "$mode: window k's file holds phase k only"
  else fail "$mode: window k's file holds phase k only" "${split[@]}"; fi
  if [ ${#runtime[@]} = 0 ]; then ok "$mode: no sample is charged to the runtime (libexitscope.so)"
  else fail "$mode: no sample is charged to the runtime (libexitscope.so)" "${runtime[@]}"; fi
done

# ---- sample accounting: ten rotations within one second ----
out=$SCRATCH/rot; mkdir -p "$out"
"$XS" run -o "$out" -p -F 1000 --format none -- "$HOT" rotate 10 10 >rot.stdout 2>rot.stderr
rc=$?
pid=$(jq -r '.pid' "$out"/exitscope-*.jsonl 2>/dev/null | head -n 1)
jsonl=$out/exitscope-$pid.jsonl
if [ $rc = 0 ] && [ "$(cat rot.stdout)" = "rotations 10 marks OK" ] && [ -f "$jsonl" ]; then
  span=$(jq -s '[.[] | select(.reason == "app")] | ((.[-1].end_ns - .[0].end_ns) / 1e6 | floor)' "$jsonl")
  n_app=$(jq -s '[.[] | select(.reason == "app")] | length' "$jsonl")
  if [ "$n_app" = 10 ] && [ "$span" -lt 1000 ]; then ok "rotations: ten app windows closed within one second (${span} ms from the first to the last)"
  else fail "rotations: ten app windows closed within one second" "app windows: $n_app, first to last: $span ms"; fi
  distinct=$(jq -r '.profile.file // "null"' "$jsonl" | sort -u | grep -vc '^null$')
  records=$(wc -l <"$jsonl")
  bad=()
  while read -r f s; do
    [ -f "$out/$f" ] || { bad+=("$f: missing"); continue; }
    c=$(perf_clean "$out/$f" "$s"); [ -n "$c" ] && bad+=("$c")
  done < <(jq -r 'select(.profile) | "\(.profile.file) \(.profile.samples)"' "$jsonl")
  ondisk=$(find "$out" -name "exitscope-$pid-*.data" | wc -l)
  notmine=$(find "$out" -name "exitscope-$pid-*.data" ! -perm 600 | wc -l)
  [ "$notmine" = 0 ] || bad+=("$notmine files not mode 0600: $(ls -l "$out")")
  if [ "$distinct" = "$records" ] && [ "$ondisk" = "$records" ] && [ ${#bad[@]} = 0 ]; then
    ok "rotations: $records records name $records distinct files, each valid, mode 0600"
  else
    fail "rotations: every record names its own valid file" "records $records, distinct names $distinct, files on disk $ondisk" "${bad[@]}"
  fi
  sum_rec=$(jq -s 'map(.profile.samples // 0) | add' "$jsonl")
  sum_files=0; per=()
  for f in "$out"/exitscope-"$pid"-*.data; do
    n=$(nsamples "$f"); sum_files=$((sum_files + n)); per+=("${f##*/}: $n")
  done
  lost=$(for f in "$out"/exitscope-"$pid"-*.data; do perf report --stats -i "$f" 2>/dev/null; done |
    awk '/LOST/ { s += $3 } END { print s + 0 }')
  if [ "$sum_files" = "$sum_rec" ] && [ "$sum_files" -gt 0 ]; then
    ok "rotations: samples in the files ($sum_files, by perf script) = the records' sum ($sum_rec); lost events: $lost"
  else
    fail "rotations: samples in the files = the records' sum" "files: $sum_files, records: $sum_rec, lost: $lost" "${per[*]}"
  fi
else
  fail "rotations: tp_hot rotate 10 10 runs under -p" "status $rc" "$(cat rot.stdout rot.stderr)"
fi

# ---- SIGKILL mid-window ----
out=$SCRATCH/kill; mkdir -p "$out"
# (in a subshell, so bash's "Killed" notice stays out of the test output)
( "$XS" run -o "$out" -p --format none -- "$HOT" burn 20000 >kill.stdout 2>kill.stderr &
  echo $! >kill.pid; wait $!; echo $? >kill.rc ) 2>/dev/null &
sub=$!
for _ in $(seq 50); do [ -s kill.pid ] && break; sleep 0.1; done
kpid=$(cat kill.pid)
sleep 0.6   # past the runtime's first 50 ms drain, under load too
kill -KILL "$kpid"
wait "$sub"
rc=$(cat kill.rc 2>/dev/null)
f=$out/exitscope-$kpid-0.data
if [ "$rc" = 137 ] && [ -f "$f" ]; then
  c=$(perf_clean "$f" 1)
  n=$(count_chain <(flat "$f") tp_hot ";main_burn;")
  if [ -z "$c" ] && [ "$n" -gt 0 ]; then ok "SIGKILL: the current file opens in perf report and perf script ($n samples in main_burn)"
  else fail "SIGKILL: the current file opens in perf report and perf script" "$c" "main_burn samples: $n"; fi
else
  fail "SIGKILL: the current file opens in perf report and perf script" "status $rc (expected 137); files: $(ls "$out")"
fi

# ---- fork: the child profiles into its own file ----
out=$SCRATCH/fork; mkdir -p "$out"
"$XS" run -o "$out" -p --format none -- "$HOT" fork 300 >fork.stdout 2>fork.stderr &
ppid_=$!
wait "$ppid_"
rc=$?
child=$(awk '$1 == "child" { print $2 }' fork.stdout)
cf=$out/exitscope-$child-0.data
pf=$out/exitscope-$ppid_-0.data
if [ $rc = 0 ] && [ -n "$child" ] && [ -f "$cf" ] && [ -f "$pf" ]; then
  flat "$cf" >fork.child.flat; flat "$pf" >fork.parent.flat
  c=$(perf_clean "$cf" 1)
  in_child=$(grep -c ';child_hot;\||child_hot;' fork.child.flat)
  p_in_child=$(grep -c 'parent_hot;' fork.child.flat)
  c_in_parent=$(grep -c 'child_hot;' fork.parent.flat)
  in_parent=$(grep -c 'parent_hot;' fork.parent.flat)
  rec=$(jq -r 'select(.seq == 0) | .profile.samples' "$out/exitscope-$child.jsonl" 2>/dev/null)
  if [ -z "$c" ] && [ "$in_child" -gt 0 ] && [ "$p_in_child" = 0 ] && [ "$c_in_parent" = 0 ] && [ "$in_parent" -gt 0 ] &&
     [ "$rec" = "$(wc -l <fork.child.flat)" ]; then
    ok "fork: the child's exitscope-CHILD-0.data holds child_hot ($in_child samples), the parent's parent_hot"
  else
    fail "fork: the child's exitscope-CHILD-0.data holds child_hot, the parent's parent_hot" "$c" \
      "child file: child_hot $in_child, parent_hot $p_in_child, samples $(wc -l <fork.child.flat), record $rec" \
      "parent file: parent_hot $in_parent, child_hot $c_in_parent"
  fi
else
  fail "fork: the child's exitscope-CHILD-0.data holds child_hot" "status $rc, output: $(cat fork.stdout fork.stderr)" "files: $(ls "$out")"
fi

# ---- short-lived images: every record under -p names its file ----
out=$SCRATCH/short; mkdir -p "$out"
"$XS" run -o "$out" -p --format none -- /bin/sh -c 'exec /bin/true' >short.out 2>&1
rc=$?
missing=$(jq -r 'select(.profile == null) | "window \(.seq) (\(.reason), \(.threads[0].comm)): profile null"' "$out"/exitscope-*.jsonl 2>/dev/null)
nrec=$(cat "$out"/exitscope-*.jsonl 2>/dev/null | wc -l)
if [ $rc = 0 ] && [ "$nrec" = 2 ] && [ -z "$missing" ]; then ok "short-lived images (sh -c 'exec /bin/true'): both windows have a profile file"
else fail "short-lived images (sh -c 'exec /bin/true'): both windows have a profile file" "status $rc, records $nrec" "$missing" "files: $(ls "$out")"; fi

# ---- real programs: python3 and sqlite3 ----
# real_program NAME FUNCTION CMD...: FUNCTION shows by name in the profile.
real_program() {
  local name=$1 fn=$2; shift 2
  local out=$SCRATCH/$name
  mkdir -p "$out"
  "$XS" run -o "$out" -p --format none -- "$@" >"$out.stdout" 2>"$out.stderr"
  local rc=$? f leaf=0 any=0 total=0 probs=()
  for f in "$out"/*.data; do
    [ -f "$f" ] || continue
    flat "$f" >"$out.flat"
    total=$((total + $(wc -l <"$out.flat")))
    leaf=$((leaf + $(grep -c "|$fn;" "$out.flat")))
    any=$((any + $(grep -c "[|;]$fn;" "$out.flat")))
    s=$(nsamples "$f"); c=$(perf_clean "$f" "$s"); [ -n "$c" ] && probs+=("$c")
  done
  top=$(for f in "$out"/*.data; do perf report --stdio --no-children -g none --sort sym -i "$f" 2>/dev/null; done |
    grep -v '^#' | grep . | sort -rn | head -n 3 | tr -s ' ' | tr '\n' ',')
  if [ $rc = 0 ] && [ "$any" -gt 0 ] && [ ${#probs[@]} = 0 ]; then
    ok "$name: $fn shows by name ($leaf of $total samples as leaf, $any in the chain); top: $top"
  else
    fail "$name: $fn shows by name" "status $rc; $fn leaf $leaf, in chain $any, of $total samples; top: $top" "${probs[@]}" \
      "$(head -c 400 "$out.stderr")"
  fi
}
PY=/usr/bin/python3
if [ -x "$PY" ]; then
  real_program python3 _PyEval_EvalFrameDefault "$PY" -c '
x = 0
for i in range(4000000):
    x += i * i % 7
print(x)'
else
  fail "python3: _PyEval_EvalFrameDefault shows by name" "$PY is missing"
fi
if command -v sqlite3 >/dev/null; then
  real_program sqlite3 sqlite3VdbeExec sqlite3 :memory: \
    'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c;'
else
  fail "sqlite3: sqlite3VdbeExec shows by name" "sqlite3 is missing"
fi

# ---- bad options: usage errors ----
# usage NAME PATTERN ARGS...: status 2, the message matches PATTERN, the
# program does not run.
usage() {
  local name=$1 pat=$2; shift 2
  "$XS" run "$@" -- /bin/echo RAN >usage.out 2>usage.err
  local rc=$?
  if [ $rc = 2 ] && grep -qiE "$pat" usage.err && ! grep -q RAN usage.out; then
    ok "bad input: $name is a usage error (status 2): $(head -n 1 usage.err)"
  else
    fail "bad input: $name is a usage error (status 2)" "status $rc" "$(cat usage.out usage.err)"
  fi
}
usage "-F 0" "frequency.*0" -o "$SCRATCH" -p -F 0
usage "-F 5000" "frequency.*5000" -o "$SCRATCH" -p -F 5000
usage "-F abc" "frequency.*abc" -o "$SCRATCH" -p -F abc
usage "-g bogus" "call-graph.*bogus" -o "$SCRATCH" -p -g bogus

# ---- a full output directory ----
# full_dir NAME SIZE ARGS...: run tp_hot with the output on a tmpfs of SIZE.
if [ "$(id -u)" = 0 ]; then
  full=$SCRATCH/full; mkdir -p "$full"
  if mount -t tmpfs -o size=200k tmpfs "$full"; then
    # dwarf: window 0's file fills the directory
    "$XS" run -o "$full" -p --log full.log -- "$HOT" phases 3 300 >full.stdout 2>full.stderr
    rc=$?
    msgs=$(grep -c 'cannot write the profile' full.log)
    if [ $rc = 0 ] && [ "$(cat full.stdout)" = "phases 3 marks OK" ] && [ "$msgs" = 1 ]; then
      ok "full directory: the program completes (status 0, right output), one message: $(grep -m1 'cannot write the profile' full.log)"
    else
      fail "full directory: the program completes, one message on the log" "status $rc, messages $msgs" "$(cat full.stdout full.stderr)" "$(grep '^exitscope' full.log)"
    fi
    recs=$(cat "$full"/exitscope-*.jsonl 2>/dev/null | wc -l)   # not the run file run-PID.jsonl
    lost_msgs=$(grep -c 'cannot write the stats record' full.log)
    blocks=$(grep -c '^----- exitscope stats' full.log)
    if [ "$blocks" = 4 ] && [ "$recs" = 4 ] && [ "$lost_msgs" = 0 ]; then
      ok "full directory: the stats go on (4 windows on the log, all 4 records written: the failed profile gave back its last 64 KiB)"
    else
      fail "full directory: the stats go on" "log blocks $blocks, records $recs, 'cannot write the stats record' messages $lost_msgs"
    fi
    part=$(find "$full" -name '*.data' | head -n 1)
    if [ -n "$part" ]; then
      c=$(perf_clean "$part" 1); n=$(nsamples "$part")
      if [ -z "$c" ] && [ "$n" -gt 0 ]; then ok "full directory: the cut file ${part##*/} still opens ($n samples)"
      else fail "full directory: the cut file still opens" "$c" "samples $n"; fi
      rs=$(jq -r --arg f "${part##*/}" 'select(.profile.file == $f) | .profile.samples' "$full"/*.jsonl 2>/dev/null)
      expect_eq "full directory: the record's sample count is the cut file's" "$n" "$rs"
    else
      fail "full directory: the cut file still opens" "no .data file in $(ls -la "$full")"
    fi
    umount "$full"
  else
    fail "full directory: tmpfs mounts" "mount -t tmpfs failed"
  fi
  # fp, many small windows: the files completed before the directory
  # filled stay valid, with the samples their records give
  if mount -t tmpfs -o size=200k tmpfs "$full"; then
    "$XS" run -o "$full" -p -g fp -F 1000 --log full2.log -- "$HOT" rotate 80 5 >full2.stdout 2>full2.stderr
    rc=$?
    bad=(); n_ok=0
    while read -r f s; do
      c=$(perf_clean "$full/$f" "$s"); n=$(nsamples "$full/$f")
      if [ -n "$c" ] || [ "$n" != "$s" ]; then bad+=("$f: $c samples $n, record $s"); else n_ok=$((n_ok + 1)); fi
    done < <(jq -r 'select(.profile) | "\(.profile.file) \(.profile.samples)"' "$full"/*.jsonl 2>/dev/null)
    msgs=$(grep -c 'cannot write the profile' full2.log)
    if [ $rc = 0 ] && [ "$(cat full2.stdout)" = "rotations 80 marks OK" ] && [ "$msgs" = 1 ] && [ "$n_ok" -gt 0 ] && [ ${#bad[@]} = 0 ]; then
      ok "full directory (fp, 80 windows): the $n_ok files completed before it filled stay valid; one message"
    else
      fail "full directory (fp, 80 windows): completed files stay valid; one message" "status $rc, messages $msgs, valid $n_ok" \
        "$(cat full2.stdout full2.stderr)" "${bad[@]}"
    fi
    umount "$full"
  else
    fail "full directory (fp): tmpfs mounts" "mount -t tmpfs failed"
  fi
else
  fail "full directory: needs root to mount a small tmpfs" "running as $(id -un)"
fi

# ---- the program's behaviour does not change: no spurious EINTR ----
out=$SCRATCH/eintr; mkdir -p "$out"
"$XS" run -o "$out" -p -F 1000 --format none -- "$T/tp_eintr" 2 >eintr.out 2>eintr.err
rc=$?
samples=$(jq -s 'map(.profile.samples // 0) | add' "$out"/exitscope-*.jsonl 2>/dev/null)
if [ $rc = 0 ] && grep -qx 'result OK' eintr.out && [ "${samples:-0}" -gt 0 ]; then
  ok "no spurious EINTR: blocking read/epoll_wait/poll/nanosleep while threads burn, -F 1000 ($samples samples)"
else
  fail "no spurious EINTR: blocking read/epoll_wait/poll/nanosleep while threads burn, -F 1000" "status $rc, samples $samples" "$(cat eintr.out eintr.err)"
fi
