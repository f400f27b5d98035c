#!/usr/bin/env bash
# t400: the perf.data writer (src/runtime/profile/perfdata.c) produces files
# that the real perf 6.1 reads: a program that samples its own threads
# (tests/profile/prof_target.c, built here by tests/profile/build.sh) writes
# its profile with the writer, in fp and dwarf call-graph modes, after a
# SIGKILL, with a deleted library mapped, and with a full disk; perf report,
# perf script, perf report --header-only and perf buildid-list check it.
. "$(dirname "$0")/../lib.sh"

PT=$XS_BUILD/profile-test
P=$PT/prof_target

if ! command -v perf >/dev/null; then
  fail "perf is installed" "t400 needs perf (Debian: linux-perf)"
  exit 0
fi
check "writer and test programs build (writer with -Werror)" "$XS_ROOT/tests/profile/build.sh" "$PT"
[ -x "$P" ] || exit 0
cd "$SCRATCH" || exit 1

# field NAME FILE: the value printed by prof_target as "NAME value".
field() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

# report_clean NAME DATA: perf report opens DATA with nothing on stderr.
report_clean() {
  local out=$SCRATCH/$1.report err=$SCRATCH/$1.report.err
  if perf report --stdio -i "$2" >"$out" 2>"$err" && [ ! -s "$err" ] && grep -q '^# Samples' "$out"; then
    ok "$1: perf report opens it with no warnings"
  else
    fail "$1: perf report opens it with no warnings" "$(head -c 1500 "$err")"
  fi
}

# script_clean NAME DATA: perf script reads DATA with nothing on stderr.
script_clean() {
  if perf script -i "$2" >/dev/null 2>"$SCRATCH/$1.script.err" && [ ! -s "$SCRATCH/$1.script.err" ]; then
    ok "$1: perf script reads it with no warnings"
  else
    fail "$1: perf script reads it with no warnings" "$(head -c 1500 "$SCRATCH/$1.script.err")"
  fi
}

# perf_samples DATA: the number of SAMPLE records perf reads.
perf_samples() { perf report --stats -i "$1" 2>/dev/null | awk '/^ *SAMPLE events:/ { print $3; exit }'; }

# mean_sample_size DATA: mean size in bytes of its SAMPLE records.
mean_sample_size() {
  local sum=0 n=0 size
  while read -r size; do sum=$((sum + size)); n=$((n + 1)); done < <(
    perf script -D -i "$1" 2>/dev/null | sed -n 's/^[0-9]* 0x[0-9a-f]* \[\(0x[0-9a-f]*\)\]: PERF_RECORD_SAMPLE.*/\1/p')
  [ $n -gt 0 ] && echo $((sum / n))
}

# chain_has DATA COMM FRAME...: some sample of thread COMM has the frames
# (function names, innermost first) in this order in its call chain, each
# frame's line matching the pattern (perf script prints "addr sym+off (dso)").
chain_has() {
  local data=$1 comm=$2; shift 2
  perf script -i "$data" 2>/dev/null | awk -v comm="$comm" -v want="$*" '
    BEGIN { n = split(want, w, " ") }
    /^[^ \t]/ { inblock = ($1 == comm); k = 1; next }
    /^$/ { inblock = 0; next }
    inblock && k <= n && $2 ~ ("^" w[k] "([+@]|$)") { k++; if (k > n) { found = 1; exit } }
    END { exit found ? 0 : 1 }'
}

# one_chain DATA COMM FRAME: for diagnostics, one sample of COMM through FRAME.
one_chain() {
  perf script -i "$1" 2>/dev/null | awk -v comm="$2" -v f="$3" '
    /^[^ \t]/ { blk = $0 "\n"; keep = ($1 == comm); next }
    /^$/ { if (keep && hit) { printf "%s", blk; exit } blk = ""; hit = 0; next }
    { blk = blk $0 "\n"; if (index($0, f)) hit = 1 }'
}

# ---- fp mode ----
"$P" fp fp.data >fp.out 2>fp.err
rc=$?
expect_eq "fp: prof_target writes its profile" "0" "$rc"
report_clean fp fp.data
script_clean fp fp.data
if perf report --stdio --no-children --sort comm,sym -i fp.data 2>/dev/null >fp.sym &&
   grep -Eq 'xs-main +\[\.\] hot_main_loop' fp.sym && grep -Eq 'xs-worker +\[\.\] worker_hot' fp.sym; then
  ok "fp: hot functions by name under their thread names"
else
  fail "fp: hot functions by name under their thread names" "$(grep '%' fp.sym | head -8)"
fi
check "fp: perf script chain hot_main_loop -> main" chain_has fp.data xs-main hot_main_loop main
check "fp: perf script chain worker_hot -> worker_start" chain_has fp.data xs-worker worker_hot worker_start
expect_eq "fp: perf reads as many samples as xs_perf_samples()" "$(field samples fp.out)" "$(perf_samples fp.data)"
expect_eq "fp: lost samples shown as such" "# Total Lost Samples: $(field lost fp.out)" \
  "$(grep -m1 'Total Lost Samples' "$SCRATCH/fp.report")"

perf report --header-only -i fp.data >fp.hdr 2>&1
hdr_ok=1; missing=()
for want in "# hostname : $(uname -n)" "# os release : $(uname -r)" "# arch : $(uname -m)" \
            "# cmdline : $P fp fp.data" "# event : name = task-clock:u," "# perf version : exitscope" \
            "# nrcpus online : " "# total memory : " "# sample duration : "; do
  grep -qF -- "$want" fp.hdr || { hdr_ok=0; missing+=("missing: $want"); }
done
if [ $hdr_ok = 1 ]; then ok "fp: header features (host, os, arch, cmdline, event, cpus, memory, sample time)"
else fail "fp: header features (host, os, arch, cmdline, event, cpus, memory, sample time)" "${missing[@]}"; fi

bid=$(readelf -n "$P" 2>/dev/null | awk '/Build ID:/ { print $3 }')
if [ -n "$bid" ] && perf buildid-list -i fp.data 2>/dev/null | grep -qx "$bid $P"; then
  ok "fp: perf buildid-list lists the binary's build id"
else
  fail "fp: perf buildid-list lists the binary's build id" "readelf: $bid" "$(perf buildid-list -i fp.data 2>&1 | head -5)"
fi
fp_bytes=$(mean_sample_size fp.data)
echo "# fp: $(field samples fp.out) samples, mean SAMPLE record $fp_bytes bytes"

# ---- dwarf mode: registers + stack copy, unwound by perf through libc ----
"$P" dwarf dwarf.data >dwarf.out 2>dwarf.err
expect_eq "dwarf: prof_target writes its profile" "0" "$?"
report_clean dwarf dwarf.data
script_clean dwarf dwarf.data
if chain_has dwarf.data xs-main compare_slow '(msort_with_tmp|__GI___qsort_r|qsort_r|qsort)' sort_caller main; then
  ok "dwarf: chain unwinds comparator -> libc qsort -> sort_caller -> main"
else
  fail "dwarf: chain unwinds comparator -> libc qsort -> sort_caller -> main" "$(one_chain dwarf.data xs-main compare_slow | head -20)"
fi
if perf script -i dwarf.data 2>/dev/null | grep -A3 'compare_slow+' | grep -q 'libc.so.6'; then
  ok "dwarf: the frame above the comparator is in libc (no frame pointers there)"
else
  fail "dwarf: the frame above the comparator is in libc (no frame pointers there)"
fi
check "dwarf: worker chain worker_hot -> worker_start" chain_has dwarf.data xs-worker worker_hot worker_start
if perf report --stdio -g -i dwarf.data 2>/dev/null | grep -q 'sort_caller'; then
  ok "dwarf: perf report -g shows the caller above qsort"
else
  fail "dwarf: perf report -g shows the caller above qsort"
fi
expect_eq "dwarf: perf reads as many samples as xs_perf_samples()" "$(field samples dwarf.out)" "$(perf_samples dwarf.data)"
dw_bytes=$(mean_sample_size dwarf.data)
echo "# dwarf: $(field samples dwarf.out) samples, mean SAMPLE record $dw_bytes bytes"

# ---- SIGKILL after a flush, with records still buffered ----
{ "$P" crash crash.data >crash.out 2>crash.err; } 2>/dev/null
expect_eq "crash: prof_target died of SIGKILL" "137" "$?"
report_clean crash crash.data
expect_eq "crash: perf reads exactly the samples of the last flush" \
  "$(field flushed_samples crash.out)" "$(perf_samples crash.data)"
check "crash: call chains still resolve" chain_has crash.data xs-worker worker_hot worker_start

# ---- a mapping whose file was deleted ----
cp "$PT/libxsdel.so" "$SCRATCH/libxsdel-copy.so"
"$P" deleted deleted.data "$SCRATCH/libxsdel-copy.so" >deleted.out 2>deleted.err
expect_eq "deleted: prof_target writes its profile" "0" "$?"
[ ! -e "$SCRATCH/libxsdel-copy.so" ] || fail "deleted: the library copy was deleted"
report_clean deleted deleted.data
mm=$(perf script -D -i deleted.data 2>/dev/null | grep 'PERF_RECORD_MMAP2' | grep 'libxsdel-copy.so')
if [ -n "$mm" ] && ! grep -q 'deleted' <<<"$mm" && grep -q 'r-xp' <<<"$mm"; then
  ok "deleted: MMAP2 recorded, named without ' (deleted)'"
else
  fail "deleted: MMAP2 recorded, named without ' (deleted)'" "$mm"
fi
if perf report --stdio --no-children --sort dso -i deleted.data 2>/dev/null | grep -q 'libxsdel-copy.so'; then
  ok "deleted: samples in the deleted library are charged to it"
else
  fail "deleted: samples in the deleted library are charged to it"
fi
delbid=$(readelf -n "$PT/libxsdel.so" 2>/dev/null | awk '/Build ID:/ { print $3 }')
if [ "$(id -u)" = 0 ]; then	# map_files/ (the deleted file's build id) needs CAP_SYS_ADMIN
  if perf buildid-list -i deleted.data 2>/dev/null | grep -qx "$delbid $SCRATCH/libxsdel-copy.so"; then
    ok "deleted: build id of the deleted file recorded"
  else
    fail "deleted: build id of the deleted file recorded" "$(perf buildid-list -i deleted.data 2>&1)"
  fi
else
  echo "# deleted: build id check skipped (not root: /proc/self/map_files is closed)"
fi

# ---- a full disk: RLIMIT_FSIZE makes writes fail with EFBIG ----
(ulimit -f 16; trap '' XFSZ; exec "$P" fp full.data) >full.out 2>full.err
rc=$?
if [ $rc = 3 ] && [ "$(field write_error full.out)" = EFBIG ] && [ "$(field close_error full.out)" = EFBIG ]; then
  ok "full disk: the error is returned (write and close), the program goes on"
else
  fail "full disk: the error is returned (write and close), the program goes on" "status $rc" "$(cat full.out full.err)"
fi
report_clean "full disk" full.data
expect_eq "full disk: the file holds exactly the samples of the last good flush" \
  "$(field flushed_samples full.out)" "$(perf_samples full.data)"
