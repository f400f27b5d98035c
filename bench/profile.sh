#!/usr/bin/env bash
# bench/profile.sh: what `exitscope run --profile` costs, side by side with
# `perf record` at the same frequency, and how long a rotation takes.
#   1. CPU overhead: user+sys seconds (GNU time, children included, so the
#      profiler's own work counts: exitscope's service thread, perf record's
#      process) of a fixed CPU-bound workload, build/targets/tp_hot work N
#      (two threads, N rounds each), run natively, under exitscope without
#      and with -p (dwarf, fp) at -F 199, and under perf record -F 199 with
#      -g (fp) and with --call-graph dwarf. Variants alternate within each
#      round; median (min-max) over ROUNDS rounds; overhead = median / native
#      median - 1.
#   2. Bytes per sample: total .data size / samples (counted with perf script).
#   3. Rotation: build/targets/tp_rotate (100 threads, 500 file mappings
#      PROT_READ|PROT_EXEC) times ROT_ROUNDS exitscope_dump calls from the
#      inside, under -p (dwarf and fp) and without -p; median (min-max) ms.
# Prints a markdown table on stdout (progress on stderr). Stops with a
# non-zero status if any variant fails: no number for something that did
# not run.
# Environment: ROUNDS (3), WORK (200000 rounds per thread), ROT_ROUNDS (20),
#   ROT_THREADS (100), ROT_MAPS (500), XS_BUILD (build).
set -u -o pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
XS_BUILD=${XS_BUILD:-$root/build}
XS=$XS_BUILD/exitscope
HOT=$XS_BUILD/targets/tp_hot
ROT=$XS_BUILD/targets/tp_rotate
ROUNDS=${ROUNDS:-3}
WORK=${WORK:-200000}
ROT_ROUNDS=${ROT_ROUNDS:-20}
ROT_THREADS=${ROT_THREADS:-100}
ROT_MAPS=${ROT_MAPS:-500}

die() { echo "bench/profile: $*" >&2; exit 1; }
say() { echo "$*" >&2; }

for f in "$XS" "$HOT" "$ROT" "$XS_BUILD/lib/libexitscope.so"; do
  [ -e "$f" ] || die "missing '$f' (run make)"
done
command -v perf >/dev/null || die "perf is not installed (Debian: linux-perf)"
/usr/bin/time -f %U true >/dev/null 2>&1 || die "GNU time (/usr/bin/time) is missing (Debian: time)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/xs-bench-profile.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# nsamples DATA...: samples perf script reads in the files.
nsamples() {
  local f n=0
  for f in "$@"; do
    n=$((n + $(perf script -i "$f" -F tid 2>/dev/null | wc -l)))
  done
  echo "$n"
}

# run_variant VARIANT: runs the workload; prints "CPU_SECONDS BYTES SAMPLES"
# (bytes and samples 0 when there is no profile).
run_variant() {
  local v=$1 out=$TMP/out-$1 cmd=()
  rm -rf "$out"; mkdir -p "$out"
  case $v in
    native)      cmd=("$HOT" work "$WORK") ;;
    xs)          cmd=("$XS" run -o "$out" --format none -- "$HOT" work "$WORK") ;;
    xs-dwarf)    cmd=("$XS" run -o "$out" -p -F 199 -g dwarf --format none -- "$HOT" work "$WORK") ;;
    xs-fp)       cmd=("$XS" run -o "$out" -p -F 199 -g fp --format none -- "$HOT" work "$WORK") ;;
    perf-fp)     cmd=(perf record -q -F 199 -g -o "$out/perf.data" -- "$HOT" work "$WORK") ;;
    perf-dwarf)  cmd=(perf record -q -F 199 --call-graph dwarf -o "$out/perf.data" -- "$HOT" work "$WORK") ;;
  esac
  /usr/bin/time -f '%U %S' -o "$TMP/time" "${cmd[@]}" >"$TMP/stdout" 2>"$TMP/stderr" ||
    die "$v failed (status $?): ${cmd[*]}: $(head -c 500 "$TMP/stderr")"
  [ "$(cat "$TMP/stdout")" = worked ] || die "$v: the workload printed '$(cat "$TMP/stdout")'"
  local cpu bytes=0 samples=0 files=()
  cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$TMP/time")
  mapfile -t files < <(find "$out" -name '*.data')
  if [ ${#files[@]} -gt 0 ]; then
    bytes=$(cat "${files[@]}" | wc -c)
    samples=$(nsamples "${files[@]}")
  fi
  echo "$cpu $bytes $samples"
}

# stats: "median min max" of the numbers on stdin.
stats() { sort -g | awk '{ v[NR] = $1 } END { printf "%s %s %s\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'; }

VARIANTS=(native xs xs-dwarf xs-fp perf-fp perf-dwarf)
declare -A cpu bytes samples
say "bench/profile: tp_hot work $WORK (2 threads), $ROUNDS rounds, variants alternate"
for round in $(seq "$ROUNDS"); do
  for v in "${VARIANTS[@]}"; do
    read -r c b s < <(run_variant "$v") || exit 1
    [ -n "${c:-}" ] || exit 1
    cpu[$v]+="$c "; bytes[$v]=$(( ${bytes[$v]:-0} + b )); samples[$v]=$(( ${samples[$v]:-0} + s ))
    say "  round $round $v: ${c}s user+sys, $b bytes, $s samples"
  done
done

# rotation: median of ROT_ROUNDS dumps inside one run, per variant
declare -A rot
for v in xs-dwarf xs-fp xs; do
  out=$TMP/rot-$v; maps=$TMP/maps-$v
  rm -rf "$out" "$maps"; mkdir -p "$out" "$maps"
  args=(); case $v in xs-dwarf) args=(-p -g dwarf) ;; xs-fp) args=(-p -g fp) ;; esac
  line=$("$XS" run -o "$out" "${args[@]}" --format none -- "$ROT" "$maps" $((ROT_THREADS - 1)) "$ROT_MAPS" "$ROT_ROUNDS") ||
    die "tp_rotate under $v failed: $line"
  [[ $line =~ ^rotate_ms\ median\ ([0-9.]+)\ min\ ([0-9.]+)\ max\ ([0-9.]+)\ rounds\ [0-9]+\ maps\ ([0-9]+)\ threads\ ([0-9]+)$ ]] ||
    die "tp_rotate under $v printed '$line'"
  rot[$v]="${BASH_REMATCH[1]} (${BASH_REMATCH[2]}–${BASH_REMATCH[3]})"
  rot_maps=${BASH_REMATCH[4]}; rot_threads=${BASH_REMATCH[5]}
  say "  rotation $v: $line"
  rm -rf "$maps"
done

read -r nat_med _ _ < <(tr ' ' '\n' <<<"${cpu[native]}" | grep . | stats)
row() {
  local v=$1 label=$2 med min max over bps
  read -r med min max < <(tr ' ' '\n' <<<"${cpu[$v]}" | grep . | stats)
  over=$(awk -v a="$med" -v b="$nat_med" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }')
  if [ "${samples[$v]}" -gt 0 ]; then
    bps=$(awk -v b="${bytes[$v]}" -v s="${samples[$v]}" 'BEGIN { printf "%.0f", b / s }')
    bps="$bps ($((samples[$v] / ROUNDS)) samples/run)"
  else
    bps="–"
  fi
  echo "| $label | $med ($min–$max) | $over | $bps |"
}

cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
cat <<EOF
## Profiler: CPU overhead, bytes per sample, rotation

Machine: $(nproc) CPUs, $cpu_model; \`$(uname -srm)\`; load average $(cut -d' ' -f1-3 /proc/loadavg).
Generated by \`bench/profile.sh\` on $(date -u +%Y-%m-%dT%H:%MZ) (commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)).
Workload: \`tp_hot work $WORK\` (two threads, fixed work); $ROUNDS rounds, variants alternating; median (min–max).

| variant | user+sys s | overhead vs native | bytes per sample |
|---|---|---|---|
$(row native "native")
$(row xs "exitscope run (no profile)")
$(row xs-dwarf "exitscope run -p -F 199 -g dwarf")
$(row xs-fp "exitscope run -p -F 199 -g fp")
$(row perf-dwarf "perf record -F 199 --call-graph dwarf")
$(row perf-fp "perf record -F 199 -g (fp)")

| rotation ($rot_threads threads, $rot_maps mappings, $ROT_ROUNDS exitscope_dump calls timed inside) | ms per boundary |
|---|---|
| exitscope run -p -g dwarf | ${rot[xs-dwarf]} |
| exitscope run -p -g fp | ${rot[xs-fp]} |
| exitscope run (no profile) | ${rot[xs]} |
EOF
