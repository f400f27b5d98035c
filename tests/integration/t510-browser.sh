#!/usr/bin/env bash
# t510: the HTML report and the flame graph SVGs in a real browser
# (headless Chromium from Debian, no network, a fresh profile). A run of
# tp_hot with three marked phases, a 150 ms --interval and a (DWARF)
# profile gives a report; in Chromium:
#   - the page loads with no console message at all (a page with a
#     deliberate error is caught the same way, so the check can fail);
#   - the windows table has one row per record, in order, by seq;
#   - one chart element per window;
#   - the interval time series is drawn, one column per window with a length;
#   - each window's flame graph: every function's total width is its share
#     of the window's samples as `exitscope flame --frames` computes it from
#     the same .data (within 0.2 points), and the known hot function
#     main_phase1 is there, as wide as its share (at least 30%) in the window
#     where it is hottest; the search box's share equals the width;
#   - the comparison of windows 0 and 1 equals `exitscope diff` row by row;
#   - the standalone SVG: search share, and a click zooms a frame to full width.
# Screenshots go to build/test-artifacts/ (report.png, flame.png).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
B=$XS_ROOT/tests/integration/lib-browser.py
ART=$XS_BUILD/test-artifacts
mkdir -p "$ART"
for cmd in chromium perf; do
  if ! command -v "$cmd" >/dev/null; then
    fail "$cmd is installed (apt-get install chromium linux-perf; .ci/run does)"
    exit 0
  fi
done

# --- the browser check itself can fail: a broken page is caught ---
printf '<!DOCTYPE html><html><body><p>x</p><script>notDefined();</script></body></html>\n' >"$SCRATCH/broken.html"
echo 'return 1;' >"$SCRATCH/one.js"
"$B" "$SCRATCH/broken.html" "$SCRATCH/one.js" >"$SCRATCH/broken.json"
if jq -e '.result == 1 and (.console | length) >= 1 and (.console[0] | test("notDefined"))' "$SCRATCH/broken.json" >/dev/null; then
  ok "browser harness: a page's script error is seen"
else fail "browser harness: a page's script error is seen" "$(cat "$SCRATCH/broken.json")"; fi

# --- a run with phases, intervals and a profile ---
mkdir -p "$SCRATCH/run"
"$XS" run -o "$SCRATCH/run" -p -i 150 --format none -- "$T/tp_hot" phases 3 300 >"$SCRATCH/run.out" 2>&1
expect_eq "tp_hot phases ran under exitscope" "phases 3 marks OK" "$(cat "$SCRATCH/run.out")"
j=("$SCRATCH"/run/exitscope-*.jsonl); pid=${j[0]##*/exitscope-}; pid=${pid%.jsonl}
jsonl=$SCRATCH/run/exitscope-$pid.jsonl
"$XS" report --html "$jsonl" -o "$SCRATCH/report.html" 2>"$SCRATCH/report.err"
expect_eq "report --html: status 0" 0 "$?"

# expected per window: seq, and per profile the function shares from flame --frames -t
/usr/bin/python3 - "$XS" "$jsonl" >"$SCRATCH/expected.json" <<'PY'
import json, os, subprocess, sys
xs, jsonl = sys.argv[1], sys.argv[2]
wins = []
for line in open(jsonl):
    r = json.loads(line)
    w = {"seq": r["seq"], "duration": r["end_ns"] - r["start_ns"], "shares": None}
    if r.get("profile"):
        data = os.path.join(os.path.dirname(jsonl), r["profile"]["file"])
        out = subprocess.run([xs, "flame", "--frames", "--per-thread", data], capture_output=True, text=True, check=True).stdout
        total, per = 0, {}
        for row in out.splitlines():
            path, incl = row.split("\t")[0], int(row.split("\t")[1])
            frames = path.split(";")
            if len(frames) == 1:
                total += incl
            name = frames[-1].split(" [")[0]
            per[name] = per.get(name, 0) + incl
        w["shares"] = {k: v / total for k, v in per.items()} if total else {}
    wins.append(w)
print(json.dumps(wins))
PY
cat >"$SCRATCH/report-check.js" <<'JS'
var r = {};
r.rows = Array.prototype.map.call(document.querySelectorAll('#windows-table tbody tr'), function (tr) { return tr.getAttribute('data-seq'); });
r.charts = Array.prototype.map.call(document.querySelectorAll('svg.xs-chart'), function (s) { return s.getAttribute('data-seq'); });
r.columns = document.querySelectorAll('svg.xs-timeseries g.col').length;
r.nosamples = Array.prototype.map.call(document.querySelectorAll('section.window'), function (sec) {
  var p = sec.querySelector('.flame .nosamples');
  return p ? p.textContent : null;
});
r.flames = Array.prototype.map.call(document.querySelectorAll('section.window'), function (sec) {
  var svg = sec.querySelector('svg.xs-flame');
  if (!svg) return null;
  var width = Number(svg.getAttribute('data-width')) - 2 * Number(svg.getAttribute('data-pad'));
  var widths = {};
  svg.querySelectorAll('g.fr').forEach(function (g) {
    var name = g.getAttribute('data-l').split(' [')[0];
    var w = Number(g.querySelector('rect').getAttribute('width')) / width;
    widths[name] = (widths[name] || 0) + w;
  });
  var input = sec.querySelector('.flame input');
  input.value = '^main_phase1 ';
  input.dispatchEvent(new Event('input'));
  return { seq: sec.getAttribute('data-seq'), widths: widths, search: window.xsFlame.search(svg, '^main_phase1 '),
           shown: sec.querySelector('.fmatch').textContent };
});
r.compare = window.xsReport.compare(0, 1);
r.ratios = RATIO_CASES.map(function (c) { return window.xsReport.ratio(c[0], c[1]); });
return r;
JS
# ratios as C's printf("%.3f") rounds them (ties to even on the exact
# double), which is how exitscope diff prints them; awk's printf is C's
cases="16 1;16 3;8 5;1 3;2 3;3 2;2000 1;7 10;1 8;5 0;0 5;0 0;18446744073709551615 1"
sed -i "s|RATIO_CASES|$(awk -v c="$cases" 'BEGIN { n = split(c, p, ";"); s = "["; for (i = 1; i <= n; i++) { split(p[i], x, " "); s = s (i > 1 ? "," : "") "[\"" x[1] "\",\"" x[2] "\"]" } print s "]" }')|" "$SCRATCH/report-check.js"
expected_ratios=$(awk -v c="$cases" 'BEGIN { n = split(c, p, ";"); for (i = 1; i <= n; i++) { split(p[i], x, " ");
  if (x[1] == 0 && x[2] == 0) r = "-"; else if (x[1] == 0) r = "new"; else if (x[2] == 0) r = "gone"; else r = sprintf("%.3f", x[2] / x[1]);
  printf "%s%s", (i > 1 ? " " : ""), r } }')
"$B" "$SCRATCH/report.html" "$SCRATCH/report-check.js" >"$SCRATCH/report.json"
"$XS" diff "$jsonl:$(jq -s '.[0].seq' "$jsonl")" "$jsonl:$(jq -s '.[1].seq' "$jsonl")" >"$SCRATCH/diff.txt"
got_ratios=$(jq -r '.result.ratios | join(" ")' "$SCRATCH/report.json")
expect_eq "report page: ratios round like exitscope diff's printf (ties to even)" "$expected_ratios" "$got_ratios"

/usr/bin/python3 - "$SCRATCH/report.json" "$SCRATCH/expected.json" "$SCRATCH/diff.txt" "$SCRATCH/hot-seq" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
exp = json.load(open(sys.argv[2]))
res = got["result"] or {}
def check(name, cond, *detail):
    print(("ok - " if cond else "not ok - ") + name)
    if not cond:
        for d in detail:
            print("    " + str(d)[:1500])
check("report page: loaded and the check ran", "error" not in res and got["result"] is not None, res.get("error"))
check("report page: no console message", not got["console"], *got["console"][:5])
seqs = [str(w["seq"]) for w in exp]
check("report page: windows table rows are the records' seqs, in order (%d)" % len(seqs), res.get("rows") == seqs, res.get("rows"), seqs)
check("report page: one chart per window", res.get("charts") == seqs, res.get("charts"))
timed = sum(1 for w in exp if w["duration"] > 0)
check("report page: time series with one column per window (%d)" % timed, res.get("columns") == timed, res.get("columns"))
flames = res.get("flames") or []
profiled = [w for w in exp if w["shares"]]
drawn = [f for f in flames if f]
check("report page: a flame graph for each of the %d profiled windows with samples" % len(profiled), len(drawn) == len(profiled))
empty = [str(w["seq"]) for w in exp if w["shares"] == {}]
said = [str(w["seq"]) for w, t in zip(exp, res.get("nosamples") or []) if t == "no samples in this window"]
check("report page: 'no samples in this window' for the %d profiled windows without samples" % len(empty), said == empty, said, empty)
worst, where = 0, ""
for f, w in zip(drawn, profiled):
    for name, share in w["shares"].items():
        width = f["widths"].get(name, 0)
        # frames under 0.1 px are left out, so tiny shares may be missing
        if share * 1080 < 0.5:
            continue
        if abs(width - share) > worst:
            worst, where = abs(width - share), "window %s %s width %.4f share %.4f" % (f["seq"], name, width, share)
check("report page: every function's width is its sample share (worst %.4f)" % worst, worst <= 0.002, where)
# the known hot function: main_phase1, in the window where it has most samples
best = max(profiled, key=lambda w: w["shares"].get("main_phase1", 0))
open(sys.argv[4], "w").write(str(best["seq"]))
hot = [f for f in drawn if f["seq"] == str(best["seq"])]
hot_share = hot[0]["widths"].get("main_phase1", 0) if hot else 0
check("report page: the hot function main_phase1 is drawn in window %s as wide as its share, at least 30%% (%.3f, share %.3f)"
      % (best["seq"], hot_share, best["shares"].get("main_phase1", 0)),
      0.3 <= hot_share and abs(hot_share - best["shares"].get("main_phase1", 0)) <= 0.002)
if hot:
    check("report page: the search box matches main_phase1's width (%.4f)" % hot[0]["search"],
          abs(hot[0]["search"] - hot_share) <= 0.002 and hot[0]["shown"].endswith("% of samples"), hot[0])
# the comparison against exitscope diff's text
rows, section = [], "counter"
for line in open(sys.argv[3]).read().splitlines():
    t = line.split()
    if not t or line.startswith(("exitscope diff", "A: ", "B: ")):
        continue
    if t[0] in ("counter", "syscall") and t[-1] == "ratio":
        section = t[0]
        continue
    if section == "counter":
        rows.append([t[0], ""] + t[1:])
    elif line[2] != " ":
        rows.append(t)
    else:
        rows.append([""] + t)
check("report page: comparison of windows 0 and 1 equals exitscope diff (%d rows)" % len(rows),
      res.get("compare") == rows, res.get("compare"), rows)
PY

# --- the standalone flame graph ---
data=$SCRATCH/run/exitscope-$pid-$(cat "$SCRATCH/hot-seq" 2>/dev/null).data
"$XS" flame "$data" -o "$SCRATCH/flame.svg" 2>/dev/null
cat >"$SCRATCH/flame-check.js" <<'JS'
var svg = document.documentElement, r = {};
r.search = window.xsFlame.search(svg, '^main_phase1 ');
var g = Array.prototype.filter.call(svg.querySelectorAll('g.fr'), function (g) { return g.getAttribute('data-l').indexOf('main_phase1 ') === 0; })[0];
r.before = Number(g.querySelector('rect').getAttribute('width'));
window.xsFlame.zoom(svg, g);
r.after = Number(g.querySelector('rect').getAttribute('width'));
r.full = Number(svg.getAttribute('data-width')) - 2 * Number(svg.getAttribute('data-pad'));
r.hidden = Array.prototype.filter.call(svg.querySelectorAll('g.fr'), function (x) { return x.style.display === 'none'; }).length;
r.matched = svg.querySelector('.matched').textContent;
return r;
JS
"$B" "$SCRATCH/flame.svg" "$SCRATCH/flame-check.js" >"$SCRATCH/flame.json"
share=$(awk -F'\t' '{ k = split($1, f, ";"); if (k == 1) t += $2; n = f[k]; sub(/ \[.*$/, "", n); if (n == "main_phase1") s += $2 }
  END { if (t) printf "%.4f", s / t }' < <("$XS" flame --frames "$data"))
# (on a loaded machine the worker may get no sample in the window: main_phase1
# is then already full width, and the zoom can only keep it so)
if jq -e --argjson s "${share:-0}" '(.console | length) == 0 and .result.error == null and
    (.result.search - $s | fabs) <= 0.002 and
    (if $s < 0.999 then .result.after > .result.before and .result.hidden > 0 else .result.after >= .result.before end) and
    (.result.after - .result.full | fabs) < 0.5 and (.result.matched | startswith("Matched: "))' \
    "$SCRATCH/flame.json" >/dev/null; then
  ok "flame SVG in the browser: no console message, search share $share, a click zooms to full width"
else fail "flame SVG in the browser: no console message, search share $share, a click zooms to full width" "$(cat "$SCRATCH/flame.json")"; fi

# --- screenshots as test artefacts ---
"$B" --screenshot "$ART/report.png" "$SCRATCH/report.html" 3000 2>"$SCRATCH/shot.err"
if [ -s "$ART/report.png" ]; then ok "screenshot saved: $ART/report.png"; else fail "screenshot saved" "$(cat "$SCRATCH/shot.err")"; fi
"$B" --screenshot "$ART/flame.png" "$SCRATCH/flame.svg" 500 2>>"$SCRATCH/shot.err"
if [ -s "$ART/flame.png" ]; then ok "screenshot saved: $ART/flame.png"; else fail "screenshot saved: flame" "$(cat "$SCRATCH/shot.err")"; fi
