#!/usr/bin/env python3
"""Helper for t300-strace-agree.sh: compares exitscope's per-call counts with strace's.

Three inputs per workload, all produced by the shell test:
  native.strace    `strace -f -C -U name,calls,errors -o FILE -- CMD`, run natively
  records/         `exitscope run -o records -- CMD`: exitscope-<pid>.jsonl files
  xs.trace         `strace -f -i -o FILE -- exitscope run -o DIR -- CMD`: a full trace
                   used only to find, per program image, the calls made before the
                   runtime switched Syscall User Dispatch on

The rule checked, per system call name and separately for calls and errors:

    strace_native == exitscope_sum + INITIAL_EXECVE + sum over images of LOADER(image)

    strace_native  the table of (a), with exit_group and exit counted from its trace
                   lines (STRACE_NEVER_RETURNS)
    exitscope_sum  .window.syscalls summed over all records of all files
    LOADER(image)  for each program image the runtime ran in (the first image and
                   every exec'd image), the native start-up exitscope cannot see: the
                   longest prefix of that image's calls in (a) that are all found
                   (as a multiset, order aside: see loader_prefix) among the calls
                   the same image made in (c) before the runtime's
                   prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON). Measured
                   per image, because the loader's work depends on the libraries.
                   What (c) has beyond that prefix (loading libexitscope.so, the
                   runtime's start-up, the loader's bookkeeping growing by a page) is
                   the preload footprint: printed, never allowed.

A statically linked program runs under exitscope's loader (build/lib/exitscope-ld):
in (c) its image is an execve of the loader, which maps the program, starts the
runtime and switches dispatch on before the program's first instruction. So every
call of such an image is the runtime's to count, and nothing is allowed for it
(STATIC_UNDER_LOADER); it needs no twin in (a).

A program that reads /proc/self/maps (glibc's pthread_getattr_np for the main
thread, which Rust's std calls at start-up) reads a longer file under exitscope: the
loader's or the preload's and the runtime's mappings are listed too. Reading it takes
more read calls then, each one rightly counted. MAPS_LONGER allows, for read, the
number of the program's reads on a /proc/self/maps descriptor in (a) minus that in
(c): a read made by the thread that opened the descriptor, before it closed it, of
one of the sizes the program asked for natively (glibc's stdio asks 1024; the
runtime, which reads the file too, asks other sizes).

Images are matched between (a) and (c) by path and occurrence (the 2nd exec of
/usr/bin/sort in (c) with the 2nd in (a)). Fork and vfork children have no loader
phase, so nothing is allowed for them.

strace prints a call in two halves ("<unfinished ...>", "<... resumed>") whenever
another tracee's line comes in between, which depends on how the processes happened
to run (sh-vfork-exec: the vfork parent resumes while the child's image starts up).
Every call is joined back into one line before its key, result or error is read
(read_calls), so the reading of a trace does not depend on that interleaving.

Usage: lib-strace-agree.py check NAME DIR   (DIR holds native.strace, records/, xs.trace)
Prints "# " lines describing the allowances, and on disagreement the problems and a
per-call table; exits 1 on disagreement.
"""
import glob
import json
import os
import re
import sys

# --- the allowed differences, named, each with its reason -----------------------------

# The exitscope CLI (not the program) makes the execve that starts the first image; no
# runtime exists yet, so exitscope cannot count it. Native strace counts it as the
# program's first call. Exactly once per run: an execve made later by the program
# itself (exec'd images, vfork children) traps and must be counted.
INITIAL_EXECVE = {"execve": (1, 0)}

# strace artefacts. Mode (a) runs strace on the program natively, so it never sees the
# SIGSYS, the runtime's re-issued call and the extra rt_sigreturn that a tracer sees
# under exitscope; the traced exitscope run (xs.trace) is used only to cut each image's
# pre-runtime segment, never for counts after that cut. One artefact remains:
# strace -c counts a call when it returns, and these two never return, so its table
# never lists them. Their counts are taken from the native run's trace lines instead
# (strace -C prints the trace and the table).
STRACE_NEVER_RETURNS = ("exit_group", "exit")

# The loader that runs a statically linked program (an image of it in (c) is a static
# program's image: nothing allowed, see the module's text).
STATIC_LOADER = "exitscope-ld"

DISPATCH_ON = re.compile(r"^prctl\((PR_SET_SYSCALL_USER_DISPATCH|0x3b|59), (PR_SYS_DISPATCH_ON|0x1|1)\b")
LINE = re.compile(r"^(\d+)\s+(?:\[([0-9a-f]+)\] )?(.*)$")
CALL = re.compile(r"^([a-z_][a-z0-9_]*)\(")
RESUMED = re.compile(r"^<\.\.\. ([a-z_][a-z0-9_]*) resumed>")
RESULT_AT = re.compile(r"\)\s+= ")
RESULT = re.compile(r"\)\s+= (-?\d+|\?|0x[0-9a-f]+)(?: ([A-Z][A-Z0-9_]+))?")


def add(acc, name, calls, errors):
    c, e = acc.get(name, (0, 0))
    acc[name] = (c + calls, e + errors)


def combine(*dicts, sign=None):
    out = {}
    for i, d in enumerate(dicts):
        s = 1 if sign is None else sign[i]
        for k, (c, e) in d.items():
            add(out, k, s * c, s * e)
    return {k: v for k, v in out.items() if v != (0, 0)}


def parse_native(path):
    """`strace -f -C -U name,calls,errors -o FILE` output: trace lines, then the table.
    Returns the table as {name: (calls, errors)}, corrected by STRACE_NEVER_RETURNS:
    exit_group and exit are counted from the trace lines instead."""
    counts, never_returns, in_table = {}, {}, False
    with open(path) as f:
        for line in f:
            fields = line.split()
            if not in_table:
                if fields[:3] == ["syscall", "calls", "errors"]:
                    in_table = True
                    continue
                m = LINE.match(line)
                if m:
                    c = CALL.match(m.group(3))
                    if c and c.group(1) in STRACE_NEVER_RETURNS:
                        add(never_returns, c.group(1), 1, 0)
                continue
            if len(fields) < 2 or fields[0] == "total" or not fields[1].isdigit():
                continue
            errors = int(fields[2]) if len(fields) > 2 else 0
            add(counts, fields[0], int(fields[1]), errors)
    if not counts:
        raise SystemExit(f"no counts in strace table '{path}'")
    for name in STRACE_NEVER_RETURNS:
        if name in counts:
            raise SystemExit(f"strace counted {name} in '{path}': STRACE_NEVER_RETURNS is wrong")
    return combine(counts, never_returns)


def parse_records(directory):
    """Sum .window.syscalls over every record of every exitscope-<pid>.jsonl file."""
    files = sorted(glob.glob(os.path.join(directory, "exitscope-*.jsonl")))
    problems = []
    counts = {}
    if not files:
        problems.append(f"no exitscope-*.jsonl in '{directory}'")
    for path in files:
        last = None
        with open(path) as f:
            for number, line in enumerate(f, 1):
                try:
                    rec = json.loads(line)
                except ValueError as err:
                    problems.append(f"{os.path.basename(path)}:{number}: not JSON: {err}")
                    continue
                last = rec
                for name, c in rec["window"]["syscalls"].items():
                    add(counts, name, int(c["calls"]), int(c["errors"]))
        if last is None or last.get("reason") != "exit":
            problems.append(f"{os.path.basename(path)}: last record's reason is "
                            f"{None if last is None else last.get('reason')!r}, not 'exit'")
    return counts, len(files), problems


def call_key(text):
    """A call's identity for alignment: name and arguments, numbers and random bytes
    masked (addresses move, and sizes such as the static TLS block change when a
    library is added). The result is cut off wherever strace put it: after one space,
    or padded to a column when the call is short ("close(3)       = 0"), which is how a
    call looks when strace printed it whole and not how it looks once its halves are
    joined (read_calls)."""
    last = None
    for last in RESULT_AT.finditer(text):
        pass
    text = text[:last.start() + 1] if last else text
    text = re.sub(r'"(\\x[0-9a-f]{2})+"', '"BYTES"', text)   # random bytes (getrandom)
    return re.sub(r"\b(0x[0-9a-f]+|[0-9]+)\b", "N", text)


def split_footprint(pre_runtime):
    """Split an image's pre-runtime calls (from `strace -i`) into (start-up, footprint):
    the footprint is loading libexitscope.so (openat of it through the close of that
    fd), its RELRO mprotect, and every call made from inside libexitscope.so (the
    runtime's own start-up, by instruction pointer). What is left is the loader, libc
    and earlier constructors, as natively, plus the loader's own perturbations."""
    start = next((i for i, c in enumerate(pre_runtime)
                  if c[0] == "openat" and "libexitscope.so\"" in c[3]), None)
    if start is None:
        return pre_runtime, []
    fd = re.search(r"\)\s+= (\d+)$", pre_runtime[start][3])
    end = next((i for i in range(start, len(pre_runtime)) if fd and
                pre_runtime[i][0] == "close" and pre_runtime[i][3].startswith(f"close({fd.group(1)})")),
               start)
    lo = hi = None
    for c in pre_runtime[start:end + 1]:
        m = re.match(r"mmap\(NULL, (\d+), .*\)\s+= (0x[0-9a-f]+)$", c[3])
        if m:
            lo, hi = int(m.group(2), 16), int(m.group(2), 16) + int(m.group(1))
            break
    keep, footprint = [], list(pre_runtime[start:end + 1])
    for c in pre_runtime[:start] + pre_runtime[end + 1:]:
        addr = re.match(r"mprotect\((0x[0-9a-f]+),", c[3])
        if lo is not None and ((c[4] is not None and lo <= c[4] < hi) or
                               (addr and lo <= int(addr.group(1), 16) < hi)):
            footprint.append(c)
        else:
            keep.append(c)
    return keep, footprint


UNFINISHED = " <unfinished ...>"


def read_calls(path):
    """strace -f lines -> the calls, whole, in the order they were entered, as
    (tid, ip, name, text), and each thread's end as (tid, None, None, None).

    strace splits a call in two when another tracee's line comes between its entry
    and its exit ("brk(NULL <unfinished ...>" ... "<... brk resumed>) = 0x55c2..."),
    which happens whenever two processes run at once (a vfork parent resuming while
    its child starts up) and so varies from run to run. The halves are joined back
    into the line strace prints for an uninterrupted call ("brk(NULL) = 0x55c2...")
    before anything reads the text, so that a call's key, error flag and result never
    depend on how the tracees happened to interleave."""
    out, pending = [], {}
    with open(path) as f:
        for raw in f:
            m = LINE.match(raw.rstrip("\n"))
            if not m:
                continue
            tid, ip, rest = int(m.group(1)), m.group(2), m.group(3)
            if rest.startswith("+++"):
                out.append((tid, None, None, None))
                continue
            if rest.startswith("---"):
                continue
            r = RESUMED.match(rest)
            if r:
                entry = pending.pop(tid, None)
                if entry is not None and entry[2] == r.group(1):
                    entry[3] += rest[r.end():]
                continue
            c = CALL.match(rest)
            if not c:
                continue
            entry = [tid, int(ip, 16) if ip else None, c.group(1), rest]
            if rest.endswith(UNFINISHED):
                entry[3] = rest[:-len(UNFINISHED)]
                pending[tid] = entry
            out.append(entry)
    return [tuple(e) for e in out]


def call_result(text):
    """(return value, errno name or None) of a whole call line, or (None, None)."""
    last = None
    for last in RESULT.finditer(text):
        pass
    return (last.group(1), last.group(2)) if last else (None, None)


def parse_images(path):
    """Trace lines -> program images in the order their execve was entered. Each image
    holds the calls of the thread that exec'd it, from just after the execve until it
    exits or execs again, as [name, key, is_error, text, ip], and dispatch_at: the
    index of the runtime's prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON), or
    None. Every call is read whole (see read_calls)."""
    images, current = [], {}
    for tid, ip, name, text in read_calls(path):
        if name is None:
            current.pop(tid, None)
            continue
        value, errno = call_result(text)
        image = current.get(tid)
        if image is not None:
            image["calls"].append([name, call_key(text),
                                   bool(errno and value and value.startswith("-")), text, ip])
            if image["dispatch_at"] is None and DISPATCH_ON.match(text):
                image["dispatch_at"] = len(image["calls"]) - 1
        if name == "execve" and value == "0":
            img = re.search(r'execve\("([^"]*)"', text)
            image = {"pid": tid, "path": img.group(1) if img else "?",
                     "calls": [], "dispatch_at": None}
            images.append(image)
            current[tid] = image
    return images


MAPS_OPEN = re.compile(r'^open(?:at)?\((?:AT_FDCWD, |-?\d+, )?"/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/maps".*\)\s+= (\d+)$')
READ_FD = re.compile(r"^read\((\d+), .*, (\d+)\)\s+= ")
CLOSE_FD = re.compile(r"^close\((\d+)\)")


def maps_reads(path, sizes=None):
    """The reads on a /proc/.../maps descriptor in a trace, each by the thread that
    opened it and before it closed it: (number, the sizes asked). With SIZES, only
    reads of one of those sizes count."""
    fds, n, asked = {}, 0, set()
    for tid, _, name, text in read_calls(path):
        if name is None:
            fds.pop(tid, None)
            continue
        mine = fds.setdefault(tid, set())
        m = MAPS_OPEN.match(text)
        r = READ_FD.match(text) if name == "read" else None
        c = CLOSE_FD.match(text) if name == "close" else None
        if m:
            mine.add(m.group(1))
        elif r and r.group(1) in mine and (sizes is None or r.group(2) in sizes):
            n += 1
            asked.add(r.group(2))
        elif c:
            mine.discard(c.group(1))
    return n, asked


def tally(calls):
    out = {}
    for name, _, err, *_ in calls:
        add(out, name, 1, 1 if err else 0)
    return out


def loader_prefix(native_calls, pre_runtime):
    """Length of the longest prefix of the native image's calls that the same image
    also made under exitscope before dispatch was on (as a multiset: each call of the
    preloaded run stands for at most one native call). The preloaded start-up is the
    native one with insertions (loading libexitscope.so, the runtime's start-up, the
    loader's bookkeeping growing by a page) and slight reordering (that extra page is
    taken earlier when libexitscope.so's link map used up the first), so order cannot
    be required; the prefix ends at the first native call start-up did not make."""
    available = {}
    for _, key, err, *_ in pre_runtime:
        available[(key, err)] = available.get((key, err), 0) + 1
    for i, (_, key, err, *_) in enumerate(native_calls):
        if not available.get((key, err)):
            return i
        available[(key, err)] -= 1
    return len(native_calls)


def fmt_counts(d):
    return ", ".join(f"{k}:{c}" + (f"/{e}err" if e else "") for k, (c, e) in sorted(d.items())) or "(none)"


def cmd_check(name, directory):
    native = parse_native(os.path.join(directory, "native.strace"))
    xs, nfiles, problems = parse_records(os.path.join(directory, "records"))
    native_images = {}
    for image in parse_images(os.path.join(directory, "native.strace")):
        native_images.setdefault(image["path"], []).append(image)
    seen = {}
    allowed = dict(INITIAL_EXECVE)
    notes = [f"#   INITIAL_EXECVE: {fmt_counts(INITIAL_EXECVE)}"]
    under_runtime = 0
    for image in parse_images(os.path.join(directory, "xs.trace")):
        if image["dispatch_at"] is None:
            # The CLI's own image, or a program image the runtime never reached; the
            # latter excuses nothing and shows up below as missing counts.
            notes.append(f"#   not under the runtime: pid {image['pid']} {image['path']}")
            continue
        under_runtime += 1
        if os.path.basename(image["path"]) == STATIC_LOADER:
            notes.append(f"#   STATIC_UNDER_LOADER pid {image['pid']} {image['path']}: nothing allowed")
            continue
        k = seen[image["path"]] = seen.get(image["path"], -1) + 1
        twins = native_images.get(image["path"], [])
        if k >= len(twins):
            problems.append(f"image {image['path']} #{k} ran under exitscope but not natively")
            continue
        pre_runtime = image["calls"][:image["dispatch_at"] + 1]
        start_up, _ = split_footprint(pre_runtime)
        n = loader_prefix(twins[k]["calls"], start_up)
        loader = tally(twins[k]["calls"][:n])
        footprint = combine(tally(pre_runtime), loader, sign=[1, -1])
        notes.append(f"#   LOADER_PRE_RUNTIME {image['path']} #{k}: {fmt_counts(loader)}")
        notes.append(f"#     (not allowed: preload footprint in that image: {fmt_counts(footprint)})")
        allowed = combine(allowed, loader)
    native_maps, sizes = maps_reads(os.path.join(directory, "native.strace"))
    xs_maps = maps_reads(os.path.join(directory, "xs.trace"), sizes)[0] if sizes else 0
    if native_maps != xs_maps:
        maps_longer = {"read": (native_maps - xs_maps, 0)}
        notes.append(f"#   MAPS_LONGER: reads of /proc/self/maps, {native_maps} natively and "
                     f"{xs_maps} under exitscope: {fmt_counts(maps_longer)}")
        allowed = combine(allowed, maps_longer)
    if not under_runtime:
        problems.append("no image under the runtime found in the traced exitscope run")

    print(f"# {name}: {nfiles} record file(s), {under_runtime} image(s) under the runtime")
    for note in notes:
        print(note)
    rows = []
    for call in sorted(set(native) | set(xs) | set(allowed)):
        n, x, a = native.get(call, (0, 0)), xs.get(call, (0, 0)), allowed.get(call, (0, 0))
        if n[0] != x[0] + a[0] or n[1] != x[1] + a[1]:
            rows.append((call, n, x, a))
    if rows:
        problems.append(f"{len(rows)} system call(s) disagree beyond the allowed differences")
    for p in problems:
        print(p)
    if rows:
        print(f"{'syscall':<18} {'strace':>8} {'exitscope':>10} {'allowed':>8} {'diff':>6}"
              f"   {'strace':>6} {'xs':>6} {'allowed':>7} {'diff':>5}  (errors)")
        for call, n, x, a in rows:
            print(f"{call:<18} {n[0]:>8} {x[0]:>10} {a[0]:>8} {n[0] - x[0] - a[0]:>+6}"
                  f"   {n[1]:>6} {x[1]:>6} {a[1]:>7} {n[1] - x[1] - a[1]:>+5}")
        print("diff = strace - exitscope - allowed; allowed = INITIAL_EXECVE + LOADER_PRE_RUNTIME + MAPS_LONGER")
    return 1 if problems else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "check":
        return cmd_check(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
