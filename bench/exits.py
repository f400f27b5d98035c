"""bench/exits.py RECORD.jsonl...: prints "EXITS FAST HAS" for a run under
exitscope: the exits of every process (the sum of each record line's
top-level window: a process's windows add up to its total, across an exec
too), how many of them took the fast path (exits_fast), and HAS = 1 if any
window has the exits_fast field, 0 if none does (a build without the fast
path: FAST is then 0 and means "not known", not "none"). A line that is not
JSON, or a window without exits, fails (status 1): the record would not say
what the benchmark reports. Plain python3 (standard library only).
"""
import json
import sys


def main():
    exits = fast = 0
    has = False
    for path in sys.argv[1:]:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                try:
                    w = json.loads(line)["window"]
                    exits += int(w["exits"])
                except (ValueError, KeyError, TypeError) as e:
                    sys.exit("exits: %s line %d: no window exits (%s)" % (path, n, e))
                if "exits_fast" in w:
                    has = True
                    fast += int(w["exits_fast"])
    if not sys.argv[1:]:
        sys.exit("exits: no record given")
    print("%d %d %d" % (exits, fast, 1 if has else 0))


if __name__ == "__main__":
    main()
