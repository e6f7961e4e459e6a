#!/usr/bin/env python3
"""hot_pages.py TRACE MAPS: the pages each round trip of hot_pages.c touched.

TRACE is valgrind --tool=lackey --trace-mem=yes's log of `hot_pages MAPS`, whose first
stdout line (the two markers' addresses) comes on stdin. Prints each page the last
round trip between the markers touched, code and data apart, with the object it belongs
to and the functions that touched it (named from each object's symbols, `nm`), then the
counts. Under valgrind glibc cannot register rseq, so current_cpu falls back to
sched_getcpu: its pages (libc's code and data, ld.so's data, libtether's PLT) are marked,
and counted apart. (Natively a library since 3e367de touches none of them; one before it
does.) Rounds 2 on are counted (the first makes what the others reuse); they differ by a
page or two with what the caller's spin and the actor's yield did under valgrind.
"""
import bisect
import re
import subprocess
import sys

trace_path, maps_path = sys.argv[1:3]
before, after = (int(x, 16) for x in sys.stdin.readline().split())

maps = []
for line in open(maps_path):
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    maps.append((lo, hi, f[1], int(f[2], 16), f[5] if len(f) > 5 else "[anon]"))

symbols = {}  # an object's path -> its sorted (address, name)


def symbols_of(path):
    if path not in symbols:
        found = []
        for dynamic in ([], ["-D"]):
            run = subprocess.run(["nm", "-C", "--defined-only", *dynamic, path], capture_output=True, text=True)
            for line in run.stdout.splitlines():
                f = line.split(" ", 2)
                if len(f) == 3:
                    try:
                        found.append((int(f[0], 16), f[2]))
                    except ValueError:
                        pass
        symbols[path] = sorted(set(found))
    return symbols[path]


def place(addr):
    """(the object's path, its permissions, the address in the object's file)."""
    for lo, hi, perm, off, name in maps:
        if lo <= addr < hi:
            return name, perm, addr - lo + off
    return "?", "", 0


def function(addr):
    path, _, at = place(addr)
    if not path.startswith("/"):
        return path
    syms = symbols_of(path)
    i = bisect.bisect_right(syms, (at, "\uffff")) - 1
    return syms[i][1].split("(")[0].split("@")[0] if i >= 0 else path.rsplit("/", 1)[-1]


trips, current, last_instr = [], None, 0
access = re.compile(r"^ ?([ILSM])\s+([0-9a-f]+),")
for line in open(trace_path):
    m = access.match(line)
    if not m:
        continue
    kind, addr = m.group(1), int(m.group(2), 16)
    if kind == "S" and addr == before:
        current = {}
        continue
    if kind == "S" and addr == after and current is not None:
        trips.append(current)
        current = None
        continue
    if current is None:
        continue
    if kind == "I":
        last_instr = addr
    page = (kind == "I", addr >> 12)
    current.setdefault(page, set()).add(function(last_instr if kind != "I" else addr))



def only_sched_getcpu(is_code, path, who):
    """A page that glibc's sched_getcpu alone touched (or, code, libtether's PLT on its way)."""
    name = path.rsplit("/", 1)[-1]
    return all("sched_getcpu" in w for w in who) or (
        is_code and name.startswith("libtether") and all(w in ("_init", "sched_getcpu") for w in who))


def counts(trip):
    """(code, data) pages, and the same without sched_getcpu's."""
    c = {True: [0, 0], False: [0, 0]}
    for (is_code, page), who in trip.items():
        c[is_code][0] += 1
        if not only_sched_getcpu(is_code, place(page << 12)[0], who):
            c[is_code][1] += 1
    return c[True], c[False]


for (is_code, page), who in sorted(trips[-1].items()):
    path, perm, _ = place(page << 12)
    note = "  (sched_getcpu's)" if only_sched_getcpu(is_code, path, who) else ""
    print(f"{'code' if is_code else 'data'} {page << 12:#014x} {path.rsplit('/', 1)[-1]} {perm}: "
          f"{', '.join(sorted(who)[:5])}{note}")
for i, trip in enumerate(trips[1:], 2):
    code, data = counts(trip)
    print(f"round trip {i} of {len(trips)}: {code[0]} code pages, {data[0]} data pages; without sched_getcpu's "
          f"{code[1]} and {data[1]}")
