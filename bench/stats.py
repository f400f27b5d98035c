"""bench/stats.py SAMPLES SKIPPED RATIOS_TSV: the ratio table and the table of
absolute numbers, in markdown on stdout, from the samples bench/run collected.

SAMPLES: lines "METRIC<TAB>VARIANT<TAB>ROUND<TAB>VALUE".
SKIPPED: lines "VARIANT<TAB>REASON" (variants that could not run here).
RATIOS_TSV (written): "METRIC_LABEL<TAB>VARIANT<TAB>MEDIAN<TAB>MIN<TAB>MAX" per
ratio, for bench/chart.py.

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

VARIANTS = ["native", "xs", "xsp", "strace", "ptrace", "pstat", "precord"]
LABEL = {
    "native": "native",
    "xs": "exitscope run",
    "xsp": "exitscope run -p",
    "strace": "strace -f -c",
    "ptrace": "perf trace -s",
    "pstat": "perf stat -e syscalls:sys_enter_*",
    "precord": "perf record -F 199 -g dwarf",
}
# metric -> (row label, unit, higher is better; None: no ratio, absolute only)
METRICS = [
    ("startup", "start-up and exit (/bin/true)", "ms", None),
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


def main():
    samples_path, skipped_path, ratios_path = sys.argv[1:4]
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
    out.append("| workload | " + " | ".join(LABEL[v] for v in others) + " |")
    out.append("|---|" + "---|" * len(others))
    tsv = []
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
            tsv.append("%s\t%s\t%.4f\t%.4f\t%.4f" % (label, v, med, min(ratios), max(ratios)))
        out.append("| %s | %s |" % (label, " | ".join(cells)))
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
    if skipped:
        out.append("")
        for v, reason in skipped.items():
            out.append("Not run: %s — %s." % (LABEL[v], reason))
    with open(ratios_path, "w") as f:
        f.write("\n".join(tsv) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
