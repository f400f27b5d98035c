"""bench/stats.py SAMPLES SKIPPED RATIOS_TSV [EXITS]: the ratio table, the
table of absolute numbers, the share of exits that took the fast path and the
issue's targets, in markdown on stdout, from the samples bench/run collected.

SAMPLES: lines "METRIC<TAB>VARIANT<TAB>ROUND<TAB>VALUE".
SKIPPED: lines "VARIANT<TAB>REASON" (variants that could not run here).
RATIOS_TSV (written): "METRIC_LABEL<TAB>VARIANT<TAB>MEDIAN<TAB>MIN<TAB>MAX" per
ratio, for bench/chart.py.
EXITS: lines "KEY<TAB>VARIANT<TAB>ROUND<TAB>EXITS<TAB>FAST<TAB>HAS" per run
under exitscope (bench/exits.py; KEY: the metric, or "redis" for the server's
whole run; HAS 0: the record has no exits_fast field).

A ratio is taken per round (the variant against native in the same round,
the variants alternating within a round), then median, min and max over the
rounds. Every ratio reads "times slower than native": variant / native for
times and latencies, native / variant for throughputs (requests per second).
Fails (status 1) if a variant that ran has a metric with no sample.
Plain python3 (standard library only).
"""
import os
import sys
from collections import defaultdict

VARIANTS = ["native", "xs", "xsnf", "xsp", "strace", "ptrace", "pstat", "precord"]
LABEL = {
    "native": "native",
    "xs": "exitscope run",
    "xsnf": "exitscope run --no-fast-path",
    "xsp": "exitscope run -p",
    "strace": "strace -f -c",
    "ptrace": "perf trace -s",
    "pstat": "perf stat -e syscalls:sys_enter_*",
    "precord": "perf record -F 199 -g dwarf",
}
# metric -> (row label, unit, higher is better; None: no ratio, absolute only)
METRICS = [
    ("startup", "start-up and exit (/bin/true)", "ms", None),
    ("startup_static", "start-up and exit, static (cc -static true)", "ms", None),
    ("startup_busybox", "start-up and exit, static (busybox true)", "ms", None),
    ("getppid", "getppid loop", "ns/call", False),
    ("pipe", "pipe write+read, 64 B", "ns/call", False),
    ("dd", "dd bs=512, %s MB" % os.environ.get("DD_MB", "200"), "s", False),
    ("sqlite_insert", "sqlite3 insert-heavy", "s", False),
    ("sqlite_query", "sqlite3 query-heavy", "s", False),
    ("redis_set_p1_rps", "redis SET -P 1, throughput", "req/s", True),
    ("redis_get_p1_rps", "redis GET -P 1, throughput", "req/s", True),
    ("redis_set_p16_rps", "redis SET -P 16, throughput", "req/s", True),
    ("redis_get_p16_rps", "redis GET -P 16, throughput", "req/s", True),
    ("redis_set_p1_p99", "redis SET -P 1, p99 latency", "ms", False),
    ("redis_get_p1_p99", "redis GET -P 1, p99 latency", "ms", False),
    ("redis_set_p16_p99", "redis SET -P 16, p99 latency", "ms", False),
    ("redis_get_p16_p99", "redis GET -P 16, p99 latency", "ms", False),
    ("cpu", "CPU-bound (tp_hot, 2 threads)", "s", False),
]

# the variants whose record says how many exits took the fast path
XS_VARIANTS = ["xs", "xsnf", "xsp"]
# issue 11's targets for exitscope run (the fast path), times slower than
# native, on the median ratio
TARGETS = {
    "getppid": 1.3,
    "dd": 1.4,
    "sqlite_insert": 1.2,
    "sqlite_query": 1.2,
    "redis_set_p1_rps": 1.2,
    "redis_get_p1_rps": 1.2,
    "redis_set_p16_rps": 1.2,
    "redis_get_p16_rps": 1.2,
}
# wall-time workloads where native time / calls is a fair "ns per call": the
# run is system calls (the CPU-bound one is not)
PER_CALL = {"dd", "sqlite_insert", "sqlite_query"}
FAST_COL = "fast path (exitscope run)"


def exits_key(metric):
    return "redis" if metric.startswith("redis_") else metric


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def fmt(x):
    if x >= 1000:
        return "%.0f" % x
    if x >= 100:
        return "%.1f" % x
    if x >= 10:
        return "%.2f" % x
    return "%.3f" % x


def load_exits(path):
    """(key, variant) -> {round: (exits, fast, has)}"""
    runs = defaultdict(dict)
    if path:
        for line in open(path):
            key, variant, rnd, e, f, h = line.rstrip("\n").split("\t")
            runs[(key, variant)][rnd] = (int(e), int(f), h == "1")
    return runs


def fast_cell(runs, key, v):
    """The share of exits that took the fast path: median (min-max) over the
    rounds, and the exits of one run (median)."""
    r = runs.get((key, v))
    if not r:
        return "–"
    if not any(h for _, _, h in r.values()):
        return "n/a (no exits_fast field)"
    shares = [100.0 * f / e if e else 0.0 for e, f, _ in r.values()]
    n = median([e for e, _, _ in r.values()])
    return "**%.1f%%** (%.1f–%.1f%%) of %s exits" % (median(shares), min(shares), max(shares), "{:,.0f}".format(n))


def native_cell(data, runs, metric, unit):
    """native's median, as ns per call where there is a count of calls."""
    nat = median(list(data[(metric, "native")].values()))
    if unit == "ns/call":
        return "%s ns/call" % fmt(nat)
    calls = runs.get((exits_key(metric), "xsnf")) or runs.get((exits_key(metric), "xs"))
    if metric in PER_CALL and calls:
        n = median([e for e, _, _ in calls.values()])
        return "%s ns/call (%s %s ÷ %s calls)" % (fmt(nat * 1e9 / n), fmt(nat), unit, "{:,.0f}".format(n))
    return "%s %s" % (fmt(nat), unit)


# start-up: a dynamically linked program against statically linked ones
# (exitscope runs those through its loader)
STARTUP = [("startup", "/bin/true (dynamic)"),
           ("startup_static", "cc -static true (static, through exitscope-ld)"),
           ("startup_busybox", "busybox true (static, through exitscope-ld)")]


def startup_section(data, ran):
    """Start-up and exit of programs that do nothing, dynamic and static, side by
    side: native's median ms, then each exitscope variant's median ms and its
    ratio to native (per round, median (min-max))."""
    rows = [(m, label) for m, label in STARTUP if (m, "native") in data]
    cols = [v for v in XS_VARIANTS if v in ran]
    if len(rows) < 2 or not cols:
        return []
    out = ["", "### Start-up: dynamic and static programs", "",
           "Wall milliseconds from outside of a program that does nothing, median over the rounds; beside",
           "each exitscope variant its ratio to native, taken per round (median (min–max)). exitscope runs",
           "a statically linked program through its loader, `build/lib/exitscope-ld`, which maps the",
           "program and starts the runtime in place of `ld.so` and the preload.", "",
           "| program | native | " + " | ".join(LABEL[v] for v in cols) + " |",
           "|---|---|" + "---|" * len(cols)]
    for metric, label in rows:
        nat = data[(metric, "native")]
        cells = []
        for v in cols:
            vals = data.get((metric, v), {})
            rounds = [r for r in vals if r in nat and nat[r] > 0]
            if not rounds:
                cells.append("–")
                continue
            ratios = [vals[r] / nat[r] for r in rounds]
            cells.append("%s ms, **%.2f** (%.2f–%.2f)" % (fmt(median([vals[r] for r in rounds])), median(ratios),
                                                          min(ratios), max(ratios)))
        out.append("| %s | %s ms | %s |" % (label, fmt(median(list(nat.values()))), " | ".join(cells)))
    return out


def main():
    samples_path, skipped_path, ratios_path = sys.argv[1:4]
    runs = load_exits(sys.argv[4] if len(sys.argv) > 4 else None)
    data = defaultdict(dict)  # (metric, variant) -> {round: value}
    for line in open(samples_path):
        metric, variant, rnd, value = line.rstrip("\n").split("\t")
        data[(metric, variant)][rnd] = float(value)
    skipped = {}
    for line in open(skipped_path):
        variant, reason = line.rstrip("\n").split("\t", 1)
        skipped[variant] = reason
    metrics = [m for m in METRICS if (m[0], "native") in data]
    ran = [v for v in VARIANTS if v not in skipped and any((m[0], v) in data for m in metrics)]
    for m in metrics:
        for v in ran:
            if (m[0], v) not in data:
                sys.exit("stats: no sample of %s under %s" % (m[0], v))
    others = [v for v in VARIANTS if v != "native"]
    out = []
    out.append("| workload | native | " + " | ".join(LABEL[v] for v in others) + " | " + FAST_COL + " |")
    out.append("|---|---|" + "---|" * len(others) + "---|")
    tsv = []
    ratio = {}  # (metric, variant) -> median ratio
    for metric, label, unit, higher in metrics:
        if higher is None:
            continue
        nat = data[(metric, "native")]
        cells = []
        for v in others:
            if v in skipped:
                cells.append("not run")
                continue
            if v not in ran:
                cells.append("–")
                continue
            vals = data[(metric, v)]
            rounds = [r for r in vals if r in nat]
            if not rounds:
                sys.exit("stats: %s under %s has no round in common with native" % (metric, v))
            ratios = [(nat[r] / vals[r]) if higher else (vals[r] / nat[r]) for r in rounds]
            med = median(ratios)
            cells.append("**%.2f** (%.2f–%.2f)" % (med, min(ratios), max(ratios)))
            ratio[(metric, v)] = cells[-1]
            tsv.append("%s\t%s\t%.4f\t%.4f\t%.4f" % (label, v, med, min(ratios), max(ratios)))
            if v == "xs":
                ratio[(metric, "xs_med")] = med
        out.append("| %s | %s | %s | %s |" % (label, native_cell(data, runs, metric, unit), " | ".join(cells),
                                               fast_cell(runs, exits_key(metric), "xs")))
    out.append("")
    out.append("Absolute numbers, median (min–max) over the rounds:")
    out.append("")
    out.append("| workload | unit | " + " | ".join(LABEL[v] for v in VARIANTS) + " |")
    out.append("|---|---|" + "---|" * len(VARIANTS))
    for metric, label, unit, higher in metrics:
        cells = []
        for v in VARIANTS:
            vals = list(data.get((metric, v), {}).values())
            if v in skipped:
                cells.append("not run")
            elif not vals:
                cells.append("–")
            else:
                cells.append("%s (%s–%s)" % (fmt(median(vals)), fmt(min(vals)), fmt(max(vals))))
        out.append("| %s | %s | %s |" % (label, unit, " | ".join(cells)))
    keys = []
    for metric, label, unit, higher in metrics:
        k = exits_key(metric)
        if k not in [x[0] for x in keys]:
            keys.append((k, "redis-server, its whole run (SET and GET, -P 1 and -P 16)" if k == "redis" else label))
    xs_ran = [v for v in XS_VARIANTS if v in ran]
    if xs_ran:
        out.append("")
        out.append("### The fast path: share of exits")
        out.append("")
        out.append("Of the exits (system calls issued) that each exitscope variant recorded, the share that took")
        out.append("the fast path (`exits_fast / exits`, every process's windows summed): median (min–max) over")
        out.append("the rounds, and the exits of one run (median). *n/a*: this build's records have no")
        out.append("`exits_fast` field (no fast path). Under `--no-fast-path` it must be 0: a fast exit stops the run.")
        out.append("")
        out.append("| workload | " + " | ".join(LABEL[v] for v in xs_ran) + " |")
        out.append("|---|" + "---|" * len(xs_ran))
        for k, label in keys:
            out.append("| %s | %s |" % (label, " | ".join(fast_cell(runs, k, v) for v in xs_ran)))
    out.extend(startup_section(data, ran))
    tgt = [(m, l, u) for m, l, u, h in metrics if m in TARGETS and (m, "xs_med") in ratio]
    if tgt:
        cols = ["xsnf", "strace", "ptrace", "pstat", "precord"]
        out.append("")
        out.append("### Issue 11's targets")
        out.append("")
        out.append("Times slower than native, median (min–max) as above; *met* when exitscope run's median ratio")
        out.append("is at most the target. The native column gives the scale: a ratio over a cheap call is a")
        out.append("larger share of the call.")
        out.append("")
        out.append("| workload | native | target | exitscope run | met? | " + FAST_COL + " | "
                   + " | ".join(LABEL[v] for v in cols) + " |")
        out.append("|---|---|---|---|---|---|" + "---|" * len(cols))
        for metric, label, unit in tgt:
            t = TARGETS[metric]
            met = "met" if ratio[(metric, "xs_med")] <= t else "missed"
            cells = [("not run" if v in skipped else ratio.get((metric, v), "–")) for v in cols]
            out.append("| %s | %s | ≤ %.1f | %s | %s | %s | %s |" % (
                label, native_cell(data, runs, metric, unit), t, ratio[(metric, "xs")], met,
                fast_cell(runs, exits_key(metric), "xs"), " | ".join(cells)))
    if skipped:
        out.append("")
        for v, reason in skipped.items():
            out.append("Not run: %s — %s." % (LABEL[v], reason))
    with open(ratios_path, "w") as f:
        f.write("\n".join(tsv) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
