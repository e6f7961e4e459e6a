#!/usr/bin/env python3
"""segments.py TRACE: splits the round trips trace_driver marked into where their time went.

TRACE is the kernel trace buffer's text (sched_switch, sched_wakeup, raw_syscalls and the
driver's markers; scripts/trace_after_idle.sh records it). For each kind of round trip (F:
raw futex floor, W: tether blocking call, C: tether call with a future, Q: tether
fire-and-forget answered by a futex) it prints the medians over the round trips of:
  total      marker to marker (the driver's CLOCK_MONOTONIC)
  caller     the calling thread's user code (from a return to user mode to the next
             syscall or switch away)
  other      the other side's user code (the floor's thread, or the actor's)
  kernel     the rest: syscalls, wake-ups, context switches
and per round trip the mean count of futex syscalls and of context switches. The trace
adds its own cost to every event (a few hundred ns on these VMs): compare kinds with each
other, not with the benchmark's figures.
"""
import collections
import re
import statistics
import sys

EVENT = re.compile(r"^\s*(.+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)$")
MARK = re.compile(r"^([FWCQ])([01]) (\d+)$")
NAMES = {"F": "raw futex ping-pong", "W": "tether blocking call (call_wait)", "C": "tether call with a future", "Q": "tether fire-and-forget + futex answer"}
SYS_FUTEX, SYS_WRITE = "202", "1"


def parse(path):
    """Yields (time, cpu, pid, event, text) in trace order."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = EVENT.match(line)
            if m:
                _, pid, cpu, ts, event, text = m.groups()
                yield float(ts), int(cpu), int(pid), event, text


def ns_per_tick(events):
    """From the markers' own CLOCK_MONOTONIC stamps: whatever clock the trace used."""
    stamps = [(ts, int(MARK.match(t.strip()).group(3))) for ts, _, _, e, t in events
              if e == "tracing_mark_write" and MARK.match(t.strip())]
    if len(stamps) < 2 or stamps[-1][0] == stamps[0][0]:
        sys.exit("segments.py: fewer than two markers in the trace")
    return (stamps[-1][1] - stamps[0][1]) / (stamps[-1][0] - stamps[0][0])


def split(events, scale, ours):
    """One Counter per round trip: its kind and its time by part. Only the CPU the caller
    marks on is followed (the driver pins both sides there); a thread there that is not
    one of ours (pids in `ours`) is "elsewhere"."""
    trips, current, kind, cpu = [], None, None, None
    in_syscall = collections.defaultdict(bool)
    on_cpu = {}  # cpu -> the pid running there (sched_switch)
    caller, last = None, 0.0
    for ts, event_cpu, pid, event, text in events:
        if current is not None:  # the time since the last event: whoever ran on the CPU
            p = on_cpu.get(cpu)
            if p is not None and p != 0 and not in_syscall[p]:
                part = "caller" if p == caller else ("other" if p in ours else "elsewhere")
                current[part] += (ts - last) * scale
        last = ts
        if event == "tracing_mark_write":
            m = MARK.match(text.strip())
            if not m:
                continue
            caller, cpu, on_cpu[event_cpu] = pid, event_cpu, pid
            if m.group(2) == "0":
                current, kind = collections.Counter(), m.group(1)
                current["start"] = int(m.group(3))
            elif current is not None:
                current["total"] = int(m.group(3)) - current["start"]
                trips.append((kind, current))
                current = None
            continue
        if event == "sys_enter":
            in_syscall[pid] = True
            if current is not None and event_cpu == cpu and text.split()[1] == SYS_FUTEX:
                current["futex calls"] += 1
        elif event == "sys_exit":
            in_syscall[pid] = False
        elif event == "sched_switch":
            on_cpu[event_cpu] = int(re.search(r"next_pid=(\d+)", text).group(1))
            if current is not None and event_cpu == cpu:
                current["switches"] += 1
    return trips


def our_threads(events):
    """The driver's threads: the marker writer's and those sharing its or the actor's name."""
    writer = next(pid for _, _, pid, e, _ in events if e == "tracing_mark_write")
    names = {}
    for _, _, _, e, text in events:
        if e == "sched_switch":
            for side in ("prev", "next"):
                m = re.search(side + r"_comm=(.+?) " + side + r"_pid=(\d+)", text)
                names[int(m.group(2))] = m.group(1)
    mine = names.get(writer)
    return {p for p, n in names.items() if n == mine or n.startswith("tether-")} | {writer}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    events = list(parse(sys.argv[1]))
    trips = split(events, ns_per_tick(events), our_threads(events))
    print("| round trip | n | total | caller's code | other side's code | kernel | elsewhere | futex calls | switches |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind in "FWCQ":
        mine = [t for k, t in trips if k == kind]
        if not mine:
            continue
        med = {p: statistics.median(t[p] for t in mine) for p in ("total", "caller", "other", "elsewhere")}
        kernel = statistics.median(t["total"] - t["caller"] - t["other"] - t["elsewhere"] for t in mine)
        mean = {p: statistics.fmean(t[p] for t in mine) for p in ("futex calls", "switches")}
        print(f"| {NAMES[kind]} | {len(mine)} | {med['total'] / 1e3:.2f} us | {med['caller']:.0f} ns | "
              f"{med['other']:.0f} ns | {kernel / 1e3:.2f} us | {med['elsewhere']:.0f} ns | "
              f"{mean['futex calls']:.2f} | {mean['switches']:.2f} |")


if __name__ == "__main__":
    main()
