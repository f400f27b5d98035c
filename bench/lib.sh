# bench/lib.sh: what bench/run and the workload scripts share. Sourced, not run.
#   die MSG / say MSG           fail loudly / progress on stderr
#   wrap VARIANT                sets WRAP=(...), the command prefix of a variant
#   check_variant VARIANT       after a run: did the tool really record? (or die)
#                               Under exitscope it also appends the run's exits and
#                               how many took the fast path to VTMP/exits.cur
#   elapsed VARIANT T0 T1       the run's seconds: T1 - T0 (two readings of bash's
#                               $EPOCHREALTIME, no process spawned to read the
#                               clock), except under perf
#                               stat, its own "seconds time elapsed" (see below)
# Needs XS (the exitscope binary) and VTMP (a scratch directory of the caller).
# shellcheck shell=bash disable=SC2034  # the variables are the callers'

die() { echo "bench: $*" >&2; exit 1; }
say() { echo "$*" >&2; }
export LC_ALL=C   # a '.' in $EPOCHREALTIME and in awk's numbers

# The variants, in the order they alternate within a round, and their labels.
# xs is the default (the fast path where a call site allows it), xsnf the
# same with every call trapped (Syscall User Dispatch only).
ALL_VARIANTS=(native xs xsnf xsp strace ptrace pstat precord)
declare -A VLABEL=(
  [native]="native"
  [xs]="exitscope run"
  [xsnf]="exitscope run --no-fast-path"
  [xsp]="exitscope run -p"
  [strace]="strace -f -c"
  [ptrace]="perf trace -s"
  [pstat]="perf stat -e syscalls:sys_enter_*"
  [precord]="perf record -F 199 --call-graph dwarf"
)

# wrap VARIANT: WRAP=(the command prefix). Each tool writes where
# check_variant looks, in VTMP, cleared first.
wrap() {
  local v=$1
  rm -rf "$VTMP/out" "$VTMP/tool.out" "$VTMP/perf.data" "$VTMP/xs.log"
  mkdir -p "$VTMP/out"
  case $v in
    native)  WRAP=() ;;
    xs)      WRAP=("$XS" run -o "$VTMP/out" --log "$VTMP/xs.log" --) ;;
    xsnf)    WRAP=("$XS" run --no-fast-path -o "$VTMP/out" --log "$VTMP/xs.log" --) ;;
    xsp)     WRAP=("$XS" run -p -o "$VTMP/out" --log "$VTMP/xs.log" --) ;;
    strace)  WRAP=(strace -f -c -o "$VTMP/tool.out" --) ;;
    ptrace)  WRAP=(perf trace -s -o "$VTMP/tool.out" --) ;;
    pstat)   WRAP=(perf stat -e 'syscalls:sys_enter_*' -o "$VTMP/tool.out" --) ;;
    precord) WRAP=(perf record -q -F 199 --call-graph dwarf -o "$VTMP/perf.data" --) ;;
    *)       die "unknown variant '$v'" ;;
  esac
}

# check_variant VARIANT: the tool must have produced its record, or we have
# not measured what the table says.
check_variant() {
  local v=$1
  case $v in
    native) ;;
    xs | xsnf | xsp)
      compgen -G "$VTMP/out/exitscope-*.jsonl" >/dev/null || die "$v: no exitscope record in $VTMP/out"
      if [ "$v" = xsp ]; then compgen -G "$VTMP/out/exitscope-*-*.data" >/dev/null || die "xsp: no profile written"; fi
      count_exits "$v" ;;
    strace) grep -q 'total' "$VTMP/tool.out" 2>/dev/null || die "strace: no summary" ;;
    ptrace) grep -q 'Summary of events' "$VTMP/tool.out" 2>/dev/null || die "perf trace: no summary" ;;
    pstat)  grep -q 'syscalls:sys_enter_' "$VTMP/tool.out" 2>/dev/null || die "perf stat: no counts" ;;
    precord) [ -s "$VTMP/perf.data" ] || die "perf record: no perf.data" ;;
  esac
}

# count_exits VARIANT: the run's exits (every process's windows, which add
# up to its total) and how many took the fast path (exits_fast, from
# bench/exits.py), appended to VTMP/exits.cur as "VARIANT EXITS FAST HAS",
# HAS 0 when no record has the exits_fast field (a build without the fast
# path). Under --no-fast-path a fast exit means the option did not work, and
# the variant would not measure what its label says: stop.
count_exits() {
  local v=$1 line e f h
  line=$(/usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/exits.py" "$VTMP"/out/exitscope-*.jsonl) ||
    die "$v: cannot read the exits from the record"
  read -r e f h <<<"$line"
  if [ "$v" = xsnf ] && [ "$f" != 0 ]; then
    die "xsnf: $f of $e exits took the fast path under --no-fast-path"
  fi
  printf '%s\t%s\t%s\t%s\n' "$v" "$e" "$f" "$h" >>"$VTMP/exits.cur"
}

# elapsed VARIANT T0 T1: seconds the workload ran. perf stat with every
# syscalls:sys_enter_* tracepoint spends seconds enabling and disabling the
# ~370 events before and after the program runs (about 9 s on the development
# VM; the start-up row of the results shows it): that is not the cost of
# counting, so under perf stat the time is perf stat's own measure of the
# program's run ("seconds time elapsed"). Every other variant: wall time
# from outside, its start-up and exit included.
elapsed() {
  local v=$1 t0=$2 t1=$3 s
  if [ "$v" = pstat ]; then
    s=$(awk '/seconds time elapsed/ { print $1 }' "$VTMP/tool.out")
    [[ $s =~ ^[0-9.]+$ ]] || die "perf stat: no 'seconds time elapsed' in its output"
    awk -v s="$s" 'BEGIN { printf "%.3f\n", s }'
  else
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
  fi
}
