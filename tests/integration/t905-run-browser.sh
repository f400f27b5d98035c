#!/usr/bin/env bash
# t905: a run's HTML report (report --html RUN) in headless Chromium,
# checked against report --json of the same run. A profiled forking tree
# (sh running tw_runtree: 3 workers, a run-wide window from inside a child,
# a late child; then a pipeline, sort and wc) gives a run of several
# programs, one run-wide window and the rest:
#   - the page loads with no console message;
#   - the process tree names every process, each linking to its section;
#   - per window (1, the rest, the whole run): the tree's exits and
#     processes, and per program its processes, exits and calls, equal
#     report --json's; the stacked segments of a program add up to its
#     calls, and the bars are drawn to scale (widths as calls, in pixels);
#   - the merged flame graph of each run-wide window holds the samples of
#     every process's profile in that window, as `exitscope flame --folded`
#     counts them from the same .data files.
# The screenshot goes to build/test-artifacts/run-report.png.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
B=$XS_ROOT/tests/integration/lib-browser.py
ART=$XS_BUILD/test-artifacts
mkdir -p "$ART"
for cmd in chromium perf jq; do
  if ! command -v "$cmd" >/dev/null; then
    fail "$cmd is installed (apt-get install chromium linux-perf jq; .ci/run does)"
    exit 0
  fi
done
cd "$SCRATCH" || exit 1

"$XS" run -p --format none -- sh -c '"$0" 3 300000 && printf "b\na\n" | sort | wc -l' "$T/tw_runtree" >run.out 2>run.err
expect_eq "sh, tw_runtree, sort and wc ran under exitscope -p" "devfile=16 2" "$(echo $(cat run.out))"
d=$(ls -d exitscope-* | head -n 1)
"$XS" report --json "$d" >rep.json
"$XS" report --html "$d" -o run.html 2>html.err
expect_eq "report --html RUN: status 0" 0 "$?"

# the samples of each run-wide window's profiles, as flame --folded counts them
for f in "$d"/exitscope-*.jsonl; do
  jq -r 'select(.profile) | "\(.pid) \(.seq) \(.profile.file)"' "$f"
done >profiles.txt
/usr/bin/python3 - "$XS" "$d" rep.json profiles.txt >expected.json <<'PY'
import json, subprocess, sys
xs, d, rep, profiles = sys.argv[1:5]
rep = json.load(open(rep))
# which run-wide window a profiled record belongs to: in this run every
# record of window 1 carries run_window 1 (the window reached the shell,
# tw_runtree and its workers); the others are the rest
samples = {}
for line in open(profiles):
    pid, seq, file = line.split()
    rec = [json.loads(l) for l in open(f"{d}/exitscope-{pid}.jsonl")][int(seq)]
    out = subprocess.run([xs, "flame", "--folded", f"{d}/{file}"], capture_output=True, text=True, check=True).stdout
    n = sum(int(l.rsplit(" ", 1)[1]) for l in out.splitlines() if l.strip())
    key = str(rec["run_window"]) if rec.get("run_window") else "rest"
    samples[key] = samples.get(key, 0) + n
wins = []
for w in rep["windows"]:
    wid = str(w["run_window"]) if w["run_window"] is not None else "rest"
    wins.append({"id": wid, "exits": w["totals"]["exits"], "processes": len(w["processes"]),
                 "programs": {p["program"]: [p["processes"], p["counters"]["exits"],
                                             sum(s["calls"] for s in p["counters"]["syscalls"].values())]
                              for p in w["programs"]}})
t = rep["total"]
wins.append({"id": "all", "exits": t["totals"]["exits"], "processes": len(t["processes"]),
             "programs": {p["program"]: [p["processes"], p["counters"]["exits"],
                                         sum(s["calls"] for s in p["counters"]["syscalls"].values())]
                          for p in t["programs"]}})
print(json.dumps({"pids": sorted(p["pid"] for p in rep["processes"]), "windows": wins, "samples": samples}))
PY

cat >check.js <<'JS'
var r = {};
r.tree = Array.prototype.map.call(document.querySelectorAll('#tree li'), function (li) {
  var a = li.querySelector('a');
  var target = document.getElementById(a.getAttribute('href').slice(1));
  return { pid: Number(li.getAttribute('data-pid')), linked: !!target && target.classList.contains('proc') &&
           target.getAttribute('data-pid') === li.getAttribute('data-pid') };
});
r.windows = Array.prototype.map.call(document.querySelectorAll('section.rwindow'), function (sec) {
  var programs = {};
  var rows = sec.querySelectorAll('svg.xs-stack g.prow');
  var max = 0;
  rows.forEach(function (g) { max = Math.max(max, Number(g.getAttribute('data-calls'))); });
  var scale = [];
  rows.forEach(function (g) {
    var segs = 0, width = 0;
    g.querySelectorAll('rect.seg').forEach(function (rc) { segs += Number(rc.getAttribute('data-calls')); width += rc.getBBox().width; });
    var calls = Number(g.getAttribute('data-calls'));
    programs[g.getAttribute('data-program')] = [Number(g.getAttribute('data-processes')), Number(g.getAttribute('data-exits')), calls, segs];
    scale.push(Math.abs(width - 620 * calls / max));
  });
  var flame = sec.querySelector('div.flame');
  return { id: sec.getAttribute('data-window'), exits: Number(sec.getAttribute('data-exits')),
           processes: Number(sec.getAttribute('data-processes')), programs: programs,
           worst_scale_px: Math.max.apply(null, scale.concat([0])),
           samples: flame ? Number(flame.getAttribute('data-samples')) : null,
           flame_svg: flame ? !!flame.querySelector('svg.xs-flame') : false };
});
return r;
JS
"$B" run.html check.js >got.json
/usr/bin/python3 - got.json expected.json <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
exp = json.load(open(sys.argv[2]))
res = got.get("result") or {}
def check(name, cond, *detail):
    print(("ok - " if cond else "not ok - ") + name)
    if not cond:
        for d in detail:
            print("    " + str(d)[:1500])
check("run page: no console message", got.get("console") == [] and "error" not in res, got.get("console"), res.get("error"))
tree = res.get("tree", [])
check("run page: the process tree names every process of report --json",
      sorted(t["pid"] for t in tree) == exp["pids"], tree, exp["pids"])
check("run page: each process of the tree links to its own section", tree and all(t["linked"] for t in tree), tree)
gw = {w["id"]: w for w in res.get("windows", [])}
check("run page: one section per window of report --json, and the whole run",
      sorted(gw) == sorted(w["id"] for w in exp["windows"]), sorted(gw))
for w in exp["windows"]:
    g = gw.get(w["id"], {})
    check(f"run page, window {w['id']}: the tree's exits ({w['exits']}) and processes ({w['processes']})",
          g.get("exits") == w["exits"] and g.get("processes") == w["processes"], g.get("exits"), g.get("processes"))
    progs = {k: v[:3] for k, v in (g.get("programs") or {}).items()}
    check(f"run page, window {w['id']}: each program's processes, exits and calls",
          progs == w["programs"], progs, w["programs"])
    check(f"run page, window {w['id']}: each program's stacked segments add up to its calls",
          all(v[2] == v[3] for v in (g.get("programs") or {}).values()) and g.get("programs"), g.get("programs"))
    check(f"run page, window {w['id']}: the bars are drawn to scale (within 0.5 px)",
          g.get("worst_scale_px", 9) < 0.5, g.get("worst_scale_px"))
    if w["id"] != "all":
        want = exp["samples"].get(w["id"], 0)
        check(f"run page, window {w['id']}: the merged flame graph holds its {want} samples of every process's profile",
              want > 0 and g.get("samples") == want and g.get("flame_svg"), g.get("samples"), want)
PY
python3 "$B" --screenshot "$ART/run-report.png" run.html 2>shot.err
check "screenshot of the run's page kept in build/test-artifacts/run-report.png" test -s "$ART/run-report.png"
