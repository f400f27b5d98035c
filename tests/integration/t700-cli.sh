#!/usr/bin/env bash
# The CLI's conventions and the documents a newcomer meets first:
#   - --version, `help CMD` and `CMD --help` for every command; unknown
#     options get GNU's message and a pointer to the command's help;
#   - run -o refuses what is not a real, writable directory (/proc, sysfs,
#     /dev/null, a file) with the path and the reason; --no-records;
#   - the text table's time column says it is wall time;
#   - the man page lints clean (mandoc, groff);
#   - every path README.md, docs/DESIGN.md and the man page name exists in
#     the repo or is made by the build (or by make demo);
#   - the README's first example is the output of docs/examples/readme.sh;
#   - make demo's summary lines show each window and label the cumulative;
#     the demo's profile has two named threads and several functions; the
#     HTML report has one search control per flame graph and says "no
#     samples in this window" instead of an empty graph;
#   - the committed example page carries no absolute path;
#   - the bash completion offers commands, options, pids and record files.
# shellcheck source=tests/lib.sh
source "$(dirname "$0")/../lib.sh"
cd "$XS_ROOT" || exit 1
commands="run dump reset diff report flame"

# ---- --version, help CMD, CMD --help ----
v=$("$XS" --version 2>&1); st=$?
if [ "$st" -eq 0 ] && [[ $v =~ ^exitscope\ [0-9]+\.[0-9]+\.[0-9]+$ ]]; then ok "--version: $v"
else fail "--version prints 'exitscope X.Y.Z' and exits 0" "status $st: $v"; fi
for c in $commands; do
  "$XS" help "$c" >"$SCRATCH/help.out" 2>"$SCRATCH/help.err"; s1=$?
  "$XS" "$c" --help >"$SCRATCH/opt.out" 2>"$SCRATCH/opt.err"; s2=$?
  if [ "$s1" -eq 0 ] && [ "$s2" -eq 0 ] && head -n 1 "$SCRATCH/help.out" | grep -q "^usage: exitscope $c " &&
     cmp -s "$SCRATCH/help.out" "$SCRATCH/opt.out" && [ ! -s "$SCRATCH/help.err" ] && [ ! -s "$SCRATCH/opt.err" ]; then
    ok "help $c and $c --help print $c's usage"
  else
    fail "help $c and $c --help print $c's usage" "status $s1/$s2" "$(head -n 3 "$SCRATCH/help.out")" "$(head -n 3 "$SCRATCH/opt.out")"
  fi
done
"$XS" help >"$SCRATCH/top.out" 2>&1; st=$?
if [ "$st" -eq 0 ] && grep -q '^usage: exitscope COMMAND' "$SCRATCH/top.out"; then ok "help alone prints the top level"
else fail "help alone prints the top level" "$(cat "$SCRATCH/top.out")"; fi
"$XS" help frobnicate >/dev/null 2>"$SCRATCH/e"; st=$?
expect_eq "help of no command: status 2 and why" "2|exitscope: 'frobnicate' is not a command" "$st|$(head -n 1 "$SCRATCH/e")"

# ---- unknown options: GNU's message and where the help is ----
# expect_usage NAME EXPECTED_STDERR ARGS...
expect_usage() {
  local name=$1 want=$2; shift 2
  "$XS" "$@" >"$SCRATCH/o" 2>"$SCRATCH/e" </dev/null
  local st=$?
  expect_eq "$name" "status 2: $want" "status $st: $(cat "$SCRATCH/e")"
}
for c in $commands; do
  expect_usage "$c --frobnicate: unrecognized option" "exitscope: unrecognized option '--frobnicate'
Try 'exitscope $c --help'." "$c" --frobnicate x
done
expect_usage "run -x: invalid option" "exitscope: invalid option -- 'x'
Try 'exitscope run --help'." run -x -- /bin/true
expect_usage "run -o without its value" "exitscope: option requires an argument -- 'o'
Try 'exitscope run --help'." run -o
expect_usage "run --output-dir without its value" "exitscope: option '--output-dir' requires an argument
Try 'exitscope run --help'." run --output-dir
expect_usage "run --profile=x" "exitscope: option '--profile' doesn't allow an argument
Try 'exitscope run --help'." run --profile=x -- /bin/true
expect_usage "flame -Z: invalid option" "exitscope: invalid option -- 'Z'
Try 'exitscope flame --help'." flame -Z x.data
expect_usage "top-level unknown option" "exitscope: unrecognized option '--frobnicate'
Try 'exitscope --help'." --frobnicate

# ---- the output directory: a real, writable directory ----
# refuse NAME DIR REASON_PATTERN
refuse() {
  local name=$1 dir=$2 pattern=$3
  (cd "$SCRATCH" && "$XS" run -o "$dir" -- /bin/true >"$SCRATCH/o" 2>"$SCRATCH/e")
  local st=$?
  if [ "$st" -eq 124 ] && [ "$(wc -l <"$SCRATCH/e")" -eq 1 ] && grep -qF "'$dir'" "$SCRATCH/e" &&
     grep -Eq -- "$pattern" "$SCRATCH/e" && [ -z "$(ls "$SCRATCH"/exitscope-*.jsonl 2>/dev/null)" ]; then
    ok "$name: $(cat "$SCRATCH/e")"
  else
    fail "$name" "status $st (want 124, one line naming '$dir' and /$pattern/)" "$(cat "$SCRATCH/e")"
  fi
}
refuse "-o /proc is refused" /proc "proc filesystem"
refuse "-o /proc/self is refused" /proc/self "proc filesystem"
refuse "-o /sys is refused" /sys "sysfs filesystem"
refuse "-o /dev/null is refused" /dev/null "not a directory"
: >"$SCRATCH/plain"
refuse "-o a regular file is refused" "$SCRATCH/plain" "not a directory"
refuse "-o a missing directory is refused" "$SCRATCH/missing" "No such file or directory"
mkdir -p "$SCRATCH/good"
"$XS" run -o "$SCRATCH/good" -- /bin/true 2>/dev/null; st=$?
if [ "$st" -eq 0 ] && ls "$SCRATCH"/good/exitscope-*.jsonl >/dev/null 2>&1; then ok "-o a real directory is taken"
else fail "-o a real directory is taken" "status $st"; fi

# ---- the text table's time column ----
"$XS" run -o "$SCRATCH/good" -- /bin/true 2>"$SCRATCH/log" >/dev/null
if grep -Eq '^  % time +wall secs +usecs/call +calls +errors syscall .*wall time' "$SCRATCH/log"; then
  ok "the text table's time column says it is wall time"
else fail "the text table's time column says it is wall time" "$(grep -m1 '% time' "$SCRATCH/log")"; fi

# ---- --no-records ----
expect_usage "--no-records with -p is a usage error" "exitscope: --no-records writes no files, so it does not go with --profile
Try 'exitscope run --help'." run --no-records -p -- /bin/true
expect_usage "--no-records with -o is a usage error" "exitscope: --no-records writes no files, so it does not go with --output-dir
Try 'exitscope run --help'." run --no-records -o "$SCRATCH" -- /bin/true
mkdir -p "$SCRATCH/norec"
(cd "$SCRATCH/norec" && "$XS" run --no-records -- /bin/echo hi >"$SCRATCH/o" 2>"$SCRATCH/log"); st=$?
files=$(ls -A "$SCRATCH/norec")
if [ "$st" -eq 0 ] && [ "$(cat "$SCRATCH/o")" = hi ] && [ -z "$files" ] && grep -q 'exitscope stats for process' "$SCRATCH/log"; then
  ok "--no-records: the summary on the log, no file written"
else
  fail "--no-records: the summary on the log, no file written" "status $st, files: ${files:-none}" "$(head -n 2 "$SCRATCH/log")"
fi

# ---- the man page ----
if command -v mandoc >/dev/null; then
  # -W warning: mandoc's STYLE notes about this system's man database are not the page's
  lint=$(mandoc -T lint -W warning docs/exitscope.1 2>&1); st=$?
  if [ "$st" -eq 0 ] && [ -z "$lint" ]; then ok "mandoc -T lint: the man page is clean"
  else fail "mandoc -T lint: the man page is clean" "$lint"; fi
else
  fail "mandoc -T lint: mandoc is not installed (Debian's mandoc; .ci/run installs it)"
fi
lint=$(groff -mdoc -ww -z docs/exitscope.1 2>&1); st=$?
if [ "$st" -eq 0 ] && [ -z "$lint" ]; then ok "groff -ww: the man page is clean"
else fail "groff -ww: the man page is clean" "$lint"; fi
for c in $commands; do
  if grep -q "^\.Cm $c\$" docs/exitscope.1 && grep -q "^\.Ss $c\$" docs/exitscope.1; then ok "the man page documents $c"
  else fail "the man page documents $c"; fi
done
missing=
for o in $(sed -n 's/^ *\(-[a-zA-Z]\), \(--[a-z-]*\).*/\2/p; s/^ *\(--[a-z-]*\) .*/\1/p' <("$XS" run --help)); do
  grep -q -- "-${o#--}" docs/exitscope.1 2>/dev/null || missing="$missing $o"
done
expect_eq "the man page names every run option" "" "$missing"

# ---- every path the documents name exists (or the build makes it) ----
# Repository paths: links [..](path) and `code` spans starting with a top
# directory of the repository; names with placeholders (PID, N, FILE...)
# and absolute paths are not repository paths. The block of "make demo"
# names build/demo-out/ files: those must be what tests/demo.sh writes.
docs="README.md docs/DESIGN.md docs/exitscope.1"
for d in $docs; do
  if [ ! -f "$d" ]; then fail "$d exists (the README and the man page name it)"; continue; fi
  {
    grep -o '](\([^)#]*\))' "$d" | sed 's/^](//; s/)$//'
    grep -o '`[^`]*`' "$d" | tr -d '`' | tr ' ' '\n'
    sed -n 's/^\.Pa \([^ ]*\).*/\1/p' "$d"
  } | grep -E '^(src|docs|bench|tests|include|examples|demo|scripts|completions|build|\.ci)/' |
    sed 's/[.,;:)]*$//' | grep -vE '(^|[/_.-])(PID|PREFIX|FILE|TMP|SEQ|DIR|NAME|OUT|BASE|NEW|RUN|N|MS|HZ)([/_.-]|$)|\*|\.\.\.' |
    sort -u >"$SCRATCH/paths"
  missing=
  while read -r p; do
    case $p in
      build/demo-out/*) grep -q "${p#build/demo-out/}" tests/demo.sh || missing="$missing $p" ;;
      build/*) [ -e "$XS_BUILD/${p#build/}" ] || missing="$missing $p" ;;
      *) [ -e "$p" ] || missing="$missing $p" ;;
    esac
  done <"$SCRATCH/paths"
  expect_eq "$d: the $(wc -l <"$SCRATCH/paths") repository paths it names exist" "" "$missing"
done

# ---- the README's first example is a real run of docs/examples/readme.sh ----
if ! command -v curl >/dev/null || ! [ -x /usr/bin/python3 ]; then
  fail "README example: needs curl and /usr/bin/python3 (.ci/run installs them)"
else
  cp README.md "$SCRATCH/README.md"
  XS_ROOT_SAVED=$PWD
  if docs/examples/readme.sh "$SCRATCH/README.md" >"$SCRATCH/ex.out" 2>&1; then
    # the same commands and the same lines, but for pids, ports and numbers
    # (the call rows and the report's top calls vary with timing: left out)
    shape() { sed -n '/<!-- example:start -->/,/<!-- example:end -->/p' "$1" | sed -E 's/[0-9]+(\.[0-9]+)?/N/g; s/ +/ /g' |
              grep -vE '^ N N N N' | sed -E 's/ [a-z0-9_]+=N//g'; }
    if diff <(shape README.md) <(shape "$SCRATCH/README.md") >"$SCRATCH/shape.diff"; then
      ok "README's first example has the shape of a fresh run of docs/examples/readme.sh"
    else fail "README's first example has the shape of a fresh run of docs/examples/readme.sh" "$(head -n 20 "$SCRATCH/shape.diff")"; fi
  else
    fail "docs/examples/readme.sh runs" "$(tail -n 5 "$SCRATCH/ex.out")"
  fi
  cd "$XS_ROOT_SAVED" || exit 1
fi
# and the README's block is consistent with itself: the table's total calls
# are the window's exits
ex=$(sed -n '/<!-- example:start -->/,/<!-- example:end -->/p' README.md)
wexits=$(awk '$1 == "exits" { print $2; exit }' <<<"$ex")
tcalls=$(awk '$NF == "total" && $1 == "100.00" { print $4; exit }' <<<"$ex")
if [ -n "$wexits" ] && [ "$wexits" = "$tcalls" ] && grep -q '^\$ exitscope run ' <<<"$ex" &&
   grep -q '^\$ exitscope dump ' <<<"$ex"; then
  ok "README example: run and dump, the window's exits ($wexits) are its table's total calls"
else fail "README example: run and dump, the window's exits are its table's total calls" "exits '$wexits' calls '$tcalls'"; fi
grep -q '^!\[[^]]*\](docs/examples/[^)]*\.\(svg\|png\))' README.md && ok "README shows a picture" ||
  fail "README shows a picture from docs/examples"
grep -q 'make install PREFIX=.*DESTDIR=' README.md && ok "README says how to install" || fail "README says how to install"

# ---- make demo: the summary lines, the profile, the report ----
bash tests/demo.sh >"$SCRATCH/demo.out" 2>"$SCRATCH/demo.err"; st=$?
expect_eq "make demo (tests/demo.sh) succeeds" 0 "$st"
bad=
n=0
while read -r f; do
  while IFS=$'\t' read -r seq wexits total; do
    n=$((n + 1))
    line=$(grep -F "$(basename "$f"): seq $seq " "$SCRATCH/demo.out")
    case $line in
      *"this window exits=$wexits "*"cumulative exits=$total") ;;
      *) bad="$bad [$f seq $seq: window $wexits, total $total: '$line']" ;;
    esac
  done < <(jq -r '[.seq, .window.exits, .total.exits] | @tsv' "$f")
done < <(ls build/demo-out/exitscope-*.jsonl)
if [ "$n" -ge 3 ] && [ -z "$bad" ]; then ok "make demo: each summary line shows its window's exits and labels the cumulative ($n lines)"
else fail "make demo: each summary line shows its window's exits and labels the cumulative" "$n records;$bad"; fi
if [ -f build/demo-out/flame.svg ]; then
  data=$(ls build/demo-out/profiled/exitscope-*-1.data | head -n 1)
  "$XS" flame --per-thread --folded "$data" -o - >"$SCRATCH/folded" 2>/dev/null
  threads=$(awk '{ print $1 }' FS=';' "$SCRATCH/folded" | sort -u | tr '\n' ' ')
  funcs=$(grep -oE '(fill_block|encode_block|checksum|histogram|sort_words)' "$SCRATCH/folded" | sort -u | wc -l)
  if grep -q 'writer \[thread\]' <<<"$threads" && grep -q 'checker \[thread\]' <<<"$threads" && [ "$funcs" -ge 3 ]; then
    ok "the demo's busy window: threads writer and checker, $funcs of the demo's functions sampled"
  else fail "the demo's busy window: threads writer and checker, several functions" "threads: $threads" "functions: $funcs"; fi
  prof=$(ls -S build/demo-out/profiled/exitscope-*.jsonl | head -n 1)
  page=build/demo-out/profiled/report.html
  with=$(jq -s '[.[] | select(.profile.samples > 0)] | length' "$prof")
  without=$(jq -s '[.[] | select(.profile != null and .profile.samples == 0)] | length' "$prof")
  got_svg=$(grep -c '<svg xmlns="http://www.w3.org/2000/svg" class="xs-flame"' "$page")
  got_none=$(grep -c 'no samples in this window' "$page")
  got_box=$(grep -c 'type="search"' "$page")
  got_svgsearch=$(grep -c 'class="search"' "$page")
  expect_eq "report: one flame graph and one search box per window with samples, 'no samples in this window' for the others, no second search" \
    "$with $without $with 0" "$got_svg $got_none $got_box $got_svgsearch"
  grep -q '<text class="search"' build/demo-out/flame.svg && ok "a standalone flame SVG keeps its own Search" ||
    fail "a standalone flame SVG keeps its own Search"
else
  fail "make demo made build/demo-out/flame.svg (needs perf and jq)" "$(tail -n 3 "$SCRATCH/demo.err")"
fi

# ---- generated examples carry relative paths only ----
abs=$(grep -oE '(/work|/home|/root|/tmp|/builds?)/[^"<> ]*' docs/examples/*.html docs/examples/*.svg | sort -u | head -n 5)
expect_eq "docs/examples carry no absolute path of the machine that made them" "" "$abs"

# ---- bash completion ----
comp() {   # comp WORD...: what the completion offers for the last word
  bash -c 'source completions/exitscope.bash; cd "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _exitscope; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$SCRATCH/compdir" "$@" 2>&1 | sort | tr '\n' ' '
}
mkdir -p "$SCRATCH/compdir"
: >"$SCRATCH/compdir/exitscope-11.jsonl"; : >"$SCRATCH/compdir/exitscope-11-0.data"; : >"$SCRATCH/compdir/notes.txt"
reg=$(bash -c 'source completions/exitscope.bash; complete -p exitscope' 2>&1)
expect_eq "completion: registered for exitscope" "complete -F _exitscope exitscope" "$reg"
expect_eq "completion: commands" "--help --version diff dump flame help report reset run " "$(comp exitscope '')"
expect_eq "completion: help's commands" "diff dump flame help report reset run " "$(comp exitscope help '')"
got=$(comp exitscope run --)
for o in --output-dir --no-records --profile --frequency --call-graph --signal --interval --format --log --help; do
  grep -q -- " $o \|^$o " <<<" $got" || missing_o="${missing_o:-} $o"
done
expect_eq "completion: run's long options" "" "${missing_o:-}"
expect_eq "completion: --format's values" "gramine none text " "$(comp exitscope run --format '')"
expect_eq "completion: report takes .jsonl files" "exitscope-11.jsonl " "$(comp exitscope report '')"
expect_eq "completion: diff takes .jsonl files" "exitscope-11.jsonl " "$(comp exitscope diff exitscope-11.jsonl '')"
expect_eq "completion: flame takes .data files" "exitscope-11-0.data " "$(comp exitscope flame '')"
"$XS" run -o "$SCRATCH" -- "$T/tw_idle" timed:20000 "$SCRATCH/stop" >/dev/null 2>&1 &
idle=$!
wait_for "/proc/net/unix" "@exitscope-$idle-" 5
got=$(comp exitscope dump '')
if grep -qw "$idle" <<<"$got" && ! grep -qw "$$" <<<"$got"; then ok "completion: dump offers the pid of a process under exitscope ($idle), not others"
else fail "completion: dump offers the pid of a process under exitscope" "pid $idle, offered: $got"; fi
kill "$idle" 2>/dev/null; wait "$idle" 2>/dev/null
true
