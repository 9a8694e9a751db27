#!/usr/bin/env python3
"""The channel count of a drive (SimProfile disk.channels) from its fio fit points.

make bench-f4 fits the drive's latencies, occupancy and rates with the channel
count fixed (an integer the Levenberg-Marquardt fit cannot move). This
estimates it from the measured fit points alone (the held-out points are not
read): the smallest blocks' throughput at three queue depths, d1 < d2 < d3
(4 KiB at 1, 8 and 64 in lua_scripts/calibrate_disk.lua).

The model (docs/sim.md, "Disk model"): a request spends a time L off the
drive (latencies, sluice's own path) and a time T on one of c channels, a
small request on one channel picked by where it lands. A closed loop of q
requests is a queueing network of one delay and c queues each visited with
probability 1/c; mean-value analysis gives its throughput X(q). For each c,
T and L are set so that X(d1) and X(d3) equal the measurements; X(d2) is then
the model's prediction, and the estimate is the c whose X(d2) is closest,
among the c that give L >= 0 for every phase.

  scripts/disk_channels_estimate.py OUT/f4/fit_fio/results.json [--block 4096]
"""

import argparse
import json
import statistics
import sys

MAX_CHANNELS = 64


def mva_throughput(channels, service_s, delay_s, depth):
    """Closed-loop throughput with `depth` requests: one delay, c symmetric queues."""
    queued = 0.0
    throughput = 0.0
    for n in range(1, depth + 1):
        response = service_s * (1.0 + queued / channels)
        throughput = n / (delay_s + response)
        queued = throughput * response
    return throughput


def fit_service(channels, x_low, d_low, x_high, d_high):
    """T and L with X(d_low) = x_low and X(d_high) = x_high; None if L would be < 0."""
    # X(d_high) falls as T grows (L = d_low / x_low - T shrinks less than T adds).
    lo, hi = 0.0, d_low / x_low
    if mva_throughput(channels, hi, 0.0, d_high) > x_high:
        return None  # even with no time off the drive the channels are too fast
    for _ in range(100):
        mid = (lo + hi) / 2
        if mva_throughput(channels, mid, d_low / x_low - mid, d_high) > x_high:
            lo = mid
        else:
            hi = mid
    service = (lo + hi) / 2
    return service, d_low / x_low - service


def load_points(path, block):
    """{phase: {depth: median ops/s over repeats}} of the `block`-byte points."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"{path}: {e}")
    rates = {}
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list):
        sys.exit(f"{path}: expected a results.json object with a \"runs\" list")
    for i, run in enumerate(runs):
        params = run.get("params", {}) if isinstance(run, dict) else {}
        try:
            bs = int(params["bs_bytes"])
            depth = int(params["qd"])
        except (KeyError, TypeError, ValueError):
            sys.exit(f"{path}: runs[{i}].params: expected bs_bytes and qd (a calibrate_disk.lua point)")
        if bs != block:
            continue
        phases = run.get("phases")
        if not isinstance(phases, list):
            sys.exit(f"{path}: runs[{i}].phases: expected a list")
        for phase in phases:
            name = phase.get("phase") if isinstance(phase, dict) else None
            ops = phase.get("last_ops_per_s") if isinstance(phase, dict) else None
            if not isinstance(name, str) or not isinstance(ops, (int, float)) or ops <= 0:
                sys.exit(f"{path}: runs[{i}] phase {name}: expected a phase name and last_ops_per_s > 0")
            rates.setdefault(name, {}).setdefault(depth, []).append(ops)
    return {p: {d: statistics.median(v) for d, v in by_depth.items()} for p, by_depth in rates.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="measured fit points (sluice calibrate's OUT/fit_fio/results.json)")
    ap.add_argument("--block", type=int, default=4096, help="block size of the points used, bytes")
    args = ap.parse_args()
    points = load_points(args.results, args.block)
    if not points:
        sys.exit(f"{args.results}: no points of {args.block}-byte blocks")
    worst = {}  # channel count -> worst |error| at the middle depth over the phases
    infeasible = set()  # channel counts that need L < 0 for some phase
    for phase, by_depth in sorted(points.items()):
        depths = sorted(by_depth)
        if len(depths) < 3:
            sys.exit(f"{args.results}: {phase}: {args.block}-byte points at {len(depths)} depths; need 3")
        d_low, d_mid, d_high = depths[0], depths[len(depths) // 2], depths[-1]
        x_low, x_mid, x_high = by_depth[d_low], by_depth[d_mid], by_depth[d_high]
        print(f"{phase}: {x_low:.0f} ops/s at depth {d_low}, {x_mid:.0f} at {d_mid}, {x_high:.0f} at {d_high}")
        for c in range(1, MAX_CHANNELS + 1):
            fitted = fit_service(c, x_low, d_low, x_high, d_high)
            if fitted is None:
                infeasible.add(c)
                continue
            service, delay = fitted
            predicted = mva_throughput(c, service, delay, d_mid)
            err = (predicted - x_mid) / x_mid
            worst[c] = max(worst.get(c, 0.0), abs(err))
            print(f"  channels {c:2d}: T {service * 1e6:6.1f} us on a channel, L {delay * 1e6:5.1f} us off it;"
                  f" depth {d_mid}: {predicted:.0f} ops/s ({err * 100:+.1f}%)")
    feasible = {c: e for c, e in worst.items() if c not in infeasible}
    if not feasible:
        sys.exit("no channel count fits every phase")
    best = min(feasible, key=lambda c: (feasible[c], c))
    print(f"estimate: disk.channels = {best} (worst error at the middle depth {feasible[best] * 100:.1f}%)")


if __name__ == "__main__":
    main()
