#!/usr/bin/env python3
"""actor_ratios.py — the goal table of tether_bench_actor from its JSON output.

    build/release/bench/tether_bench_actor --benchmark_repetitions=5 \
        --benchmark_enable_random_interleaving=true \
        --benchmark_out=actor.json --benchmark_out_format=json
    python3 bench/actor_ratios.py actor.json

Prints, per benchmark, the median of the repetitions (time per call or calls per second),
its coefficient of variation, and the ratios the goals of issue 3 are stated in:
round trip (latency: tether / baseline, lower is better) and throughput (tether /
baseline, higher is better). The load average at the start of the run is in the context.
"""
import json
import sys


def main(path):
    with open(path) as f:
        data = json.load(f)
    ctx = data.get("context", {})
    load = ctx.get("load_avg", [])
    print(f"run {ctx.get('date', '?')}, load average {', '.join(f'{x:.2f}' for x in load)}")
    med, cv = {}, {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "aggregate":
            continue
        name = b["run_name"].replace("/process_time", "").replace("/real_time", "")
        if b["aggregate_name"] == "median":
            med[name] = b
        elif b["aggregate_name"] == "cv":
            cv[name] = b
    if not med:
        sys.exit("no aggregates: run with --benchmark_repetitions=5 (or more)")

    def ns(name):  # real time per iteration, ns
        b = med[name]
        scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        return b["real_time"] * scale

    def ips(name):
        return med[name]["items_per_second"]

    def cvs(name):
        return f"{100 * cv[name]['real_time']:.0f}%" if name in cv else "?"

    print(f"{'benchmark':40} {'median':>14} {'cv':>5}")
    order = ["RoundTrip/0", "RoundTripNoSpin/0", "RoundTrip/1", "RoundTripNoSpin/1",
             "FireAndForget/1", "FireAndForget/2", "FuturePerCall"]

    def key(name):
        rank = next((i for i, w in enumerate(order) if w in name), len(order))
        impl = next((i for i, w in enumerate(["_Tether_", "_Baseline_", "_Asio_"]) if w in name), 3)
        return (rank, impl, name)
    for name in sorted(med, key=key):
        if "RoundTrip" in name:
            print(f"{name:40} {ns(name) / 1e3:11.2f} us {cvs(name):>5}")
        else:
            print(f"{name:40} {ips(name) / 1e6:9.2f} M/s {cvs(name):>5}")

    def ratio(label, tether, base, fn, goal):
        if tether in med and base in med:
            r = fn(tether) / fn(base)
            print(f"  {label:58} {r:6.2f}   goal {goal}")

    print("ratios (latency: tether/base, lower is better; throughput: tether/base, higher is better)")
    for arg, how in (("0", "unpinned"), ("1", "pinned")):
        for t in ("ActorRoundTrip", "ActorRoundTripNoSpin", "ExecutorRoundTrip"):
            ratio(f"{t}/{arg} / Baseline ({how})", f"BM_Tether_{t}/{arg}", f"BM_Baseline_RoundTrip/{arg}", ns, "<= 1.0")
            ratio(f"{t}/{arg} / Asio ({how})", f"BM_Tether_{t}/{arg}", f"BM_Asio_RoundTrip/{arg}", ns, "<= 1.5")
    for p in ("1", "2"):
        ratio(f"FireAndForget/{p} / Baseline", f"BM_Tether_FireAndForget/{p}", f"BM_Baseline_FireAndForget/{p}", ips, ">= 3.0")
        ratio(f"FireAndForget/{p} / Asio", f"BM_Tether_FireAndForget/{p}", f"BM_Asio_FireAndForget/{p}", ips, "-")
    ratio("FuturePerCall / Baseline", "BM_Tether_FuturePerCall", "BM_Baseline_FuturePerCall", ips, "-")
    ratio("FuturePerCall / Asio", "BM_Tether_FuturePerCall", "BM_Asio_FuturePerCall", ips, "-")

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "actor.json")
