"""bench/chart.py RATIOS_TSV OUT.svg [TITLE]: a horizontal bar chart of the
ratio table (times slower than native, log scale), one group per workload, one
bar per variant (median, drawn from 1× = native), a whisker from min to max. The SVG is written by
hand: plain python3, standard library only.
Input lines: "WORKLOAD<TAB>VARIANT<TAB>MEDIAN<TAB>MIN<TAB>MAX".
"""
import math
import sys
from html import escape

from stats import LABEL, VARIANTS  # the variants' names live in one place

ORDER = [v for v in VARIANTS if v != "native"]
COLOR = {
    "xs": "#1f6fb4",
    "xsnf": "#0b3a66",
    "xsp": "#7fb2e0",
    "strace": "#d2492a",
    "ptrace": "#e8a33d",
    "pstat": "#5a9e4b",
    "precord": "#8a63b0",
}


def main():
    src, dst = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else "Times slower than native (log scale; bar: median ratio, whisker: min–max over the rounds)"
    groups = []  # [(workload, [(variant, med, lo, hi)])]
    for line in open(src):
        line = line.rstrip("\n")
        if not line:
            continue
        wl, v, med, lo, hi = line.split("\t")
        if not groups or groups[-1][0] != wl:
            groups.append((wl, []))
        groups[-1][1].append((v, float(med), float(lo), float(hi)))
    variants = [v for v in ORDER if any(v == b[0] for _, bars in groups for b in bars)]
    top = max(b[3] for _, bars in groups for b in bars)
    low = min(b[2] for _, bars in groups for b in bars)
    lo_dec = 0.5 if low >= 0.5 else 0.25 if low >= 0.25 else 0.1  # a ratio below 1 still shows
    hi_dec = 10 ** math.ceil(math.log10(max(top, 2)))
    left, right, bar_h, gap, width = 250, 30, 9, 10, 980
    plot_w = width - left - right
    legend_h = 22 * ((len(variants) + 2) // 3)
    y0 = 40 + legend_h + 20

    def x(val):
        val = min(max(val, lo_dec), hi_dec)
        return left + plot_w * (math.log10(val) - math.log10(lo_dec)) / (math.log10(hi_dec) - math.log10(lo_dec))

    height = y0 + sum(len(bars) * bar_h + gap for _, bars in groups) + 40
    s = []
    s.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (width, height))
    s.append('<rect width="100%" height="100%" fill="white"/>')
    s.append('<text x="%d" y="22" font-size="14" font-weight="bold">%s</text>' % (10, escape(title)))
    for i, v in enumerate(variants):
        lx = 10 + (i % 3) * 320
        ly = 40 + (i // 3) * 22
        s.append('<rect x="%d" y="%d" width="14" height="10" fill="%s"/>' % (lx, ly, COLOR[v]))
        s.append('<text x="%d" y="%d">%s</text>' % (lx + 20, ly + 10, escape(LABEL[v])))
    # grid: 0.5, 1, 2, 5, 10, 20, 50, ...
    ticks = []
    d = lo_dec
    while d <= hi_dec + 1e-9:
        ticks.append(d)
        m = round(d / 10 ** math.floor(math.log10(d)), 2)
        d = d * (2.5 if m == 2 else 2) if m in (1, 2, 5) else d * 2
    y_end = height - 30
    for t in ticks:
        xx = x(t)
        s.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="%s"/>'
                 % (xx, y0 - 5, xx, y_end, "#444" if t == 1 else "#ddd", "1.5" if t == 1 else "1"))
        s.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#444">%s×</text>' % (xx, y_end + 15, ("%g" % t)))
    y = y0
    for wl, bars in groups:
        gh = len(bars) * bar_h
        s.append('<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>' % (left - 8, y + gh / 2, escape(wl)))
        for v, med, lo, hi in bars:
            # bars grow from 1× (native): right is slower, left is faster
            x1, x2 = sorted((x(1), x(med)))
            s.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %.2f× (%.2f–%.2f)</title></rect>'
                     % (x1, y, max(x2 - x1, 1), bar_h - 1, COLOR.get(v, "#999"), escape(LABEL.get(v, v)), med, lo, hi))
            cy = y + (bar_h - 1) / 2
            s.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black" stroke-width="1"/>' % (x(lo), cy, x(hi), cy))
            s.append('<text x="%.1f" y="%.1f" font-size="8" dominant-baseline="middle" fill="#333">%.2f</text>'
                     % (max(x(hi), x2) + 3, cy + 0.5, med))
            y += bar_h
        y += gap
    s.append("</svg>")
    with open(dst, "w") as f:
        f.write("\n".join(s) + "\n")


main()
