#!/usr/bin/env python3
"""ctest physics.roofline_summary: the roofline summarizer's expected-list
logic on hand-made results (tests/physics/roofline_summary.py).

- client_rail_ceiling: the BeeGFS client's NUMA-local NIC choice, computed
  by hand for a client of 3 sockets and 8 x 50 Gb/s NICs (3, 3, 2 per
  socket: 6 NICs' worth of 8) and for a bounced GPU buffer (socket 0's NICs);
- numa_local_client_rails explains a miss at 0.9-1.05 of that ceiling and
  nothing else: not far above it, not far below it, not for GPU buffers
  with GDS, not where the ceiling does not bind; a ceiling just under the
  bound lowers the floor in proportion;
- a point the run-time cap held below saturation says so and still counts.
Exit 0 when every check holds, 1 with the failed ones printed.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import roofline_summary as rs  # noqa: E402

failures = []


def check(what, ok):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}")


NIC_50G = 50e9 / 8 * rs.NETWORK_PAYLOAD_SHARE  # a 50 Gb/s port's payload, below a gen4 x16 link


def client(**over):
    p = {"client_sockets": 3, "client_nics": 8, "client_nic_gbps": 50, "client_pcie_gen": 4,
         "client_switches_per_socket": 3, "clients": 2, "buffer": "host", "gds": "off"}
    p.update(over)
    return p


# 3 sockets, 8 NICs as 3, 3, 2: each socket carries a third, so 3 x 2 NICs.
bound = 2 * 8 * NIC_50G  # both clients' NIC ports
check("host buffers: ceiling 6/8 of the NICs",
      abs(rs.client_rail_ceiling(client(), bound) - 0.75) < 1e-9)
check("an even spread (4 sockets, 8 NICs) leaves every NIC",
      rs.client_rail_ceiling(client(client_sockets=4), bound) == 1.0)
check("a bound far below the NICs' (a drive binds) leaves the ceiling at 1",
      rs.client_rail_ceiling(client(), bound / 4) == 1.0)
check("a bounced GPU buffer takes socket 0's 3 NICs of 8",
      abs(rs.client_rail_ceiling(client(buffer="gpu"), bound) - 3 / 8) < 1e-9)
check("GPU buffers with GDS are not held by it",
      rs.client_rail_ceiling(client(buffer="gpu", gds="on"), bound) == 1.0)
# 800 Gb/s NICs on gen3 x16: each carries its PCIe link, not its port.
gen3 = rs.PCIE_X16_BYTES_PER_S[3]
check("a NIC above its PCIe link counts at the link",
      abs(rs.client_rail_ceiling(client(client_nic_gbps=800, client_pcie_gen=3), 2 * 8 * gen3) - 0.75) < 1e-9)

entries = rs.load_expected(os.path.join(HERE, "roofline_expected.json"))


def explained(p, ratio, phase="read"):
    derived = {"placement_skew": 1.0, "client_rail_ceiling": rs.client_rail_ceiling(p, bound)}
    return rs.explained_by(entries, phase, {**p, **derived}, ratio)


check("0.72 against a 0.75 ceiling is the NUMA-local choice", explained(client(), 0.72) == "numa_local_client_rails")
check("0.60 against a 0.75 ceiling is not (below 0.9 of it)", explained(client(), 0.60) is None)
check("0.85 against a 0.75 ceiling is not (something else holds it)", explained(client(), 0.85) is None)
check("with GDS the same miss is unexplained", explained(client(buffer="gpu", gds="on"), 0.72) is None)
check("an even client's miss is unexplained", explained(client(client_sockets=4), 0.72) is None)
# A ceiling just under the placed bound (0.95: the clients' 6 NICs' worth over
# a bound of 6.3) lowers the floor in proportion: 0.9 x 0.95.
near = 2 * 6 * NIC_50G / 0.95
near_derived = {"placement_skew": 1.0, "client_rail_ceiling": rs.client_rail_ceiling(client(), near)}
check("a ceiling just under the bound is 0.95", abs(near_derived["client_rail_ceiling"] - 0.95) < 1e-9)
check("0.87 against a 0.95 ceiling is the NUMA-local choice",
      rs.explained_by(entries, "read", {**client(), **near_derived}, 0.87) == "numa_local_client_rails")
check("0.84 against a 0.95 ceiling is not (below 0.9 of it)",
      rs.explained_by(entries, "read", {**client(), **near_derived}, 0.84) is None)

# The whole summarizer on a results file: a capped point says it is below saturation.
run = {"ok": True, "params": {k: str(v) for k, v in client(seed=1, index=7, servers=4, threads=4,
                                                            iodepth=2, saturating_blocks=23).items()},
       "phases": [{"phase": "read", "last_bytes_per_s": 0.5 * bound, "bound_bytes_per_s": bound,
                   "placed_bound_bytes_per_s": bound, "binding_resource": "nic port: node4/nic0->switch"}]}
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "results.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"runs": [run]}, f)
    out = subprocess.run([sys.executable, os.path.join(HERE, "roofline_summary.py"), "--expected",
                          os.path.join(HERE, "roofline_expected.json"), path], capture_output=True, text=True)
check("a miss below its ceiling's floor fails the summary", out.returncode == 1)
check("the capped point says so", "below saturation: 8 of 23 blocks in flight per client" in out.stdout)
check("and is counted", "unexplained=1" in out.stdout)

# A placement that beat the equal shares: the rate is above the equal shares'
# bound and under the placed one, which is its ceiling (not above a bound).
beat = {"ok": True, "params": run["params"],
        "phases": [{"phase": "read", "last_bytes_per_s": 1.0 * bound, "bound_bytes_per_s": 0.99 * bound,
                    "placed_bound_bytes_per_s": 1.01 * bound, "binding_resource": "fabric: leaf0->spine0"}]}
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "results.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"runs": [beat]}, f)
    out = subprocess.run([sys.executable, os.path.join(HERE, "roofline_summary.py"), path],
                         capture_output=True, text=True)
check("a placement that beat the equal shares is judged by its placed bound",
      out.returncode == 0 and "ABOVE BOUND" not in out.stdout and "unexplained=0" in out.stdout)

print("roofline summary: " + ("ok" if not failures else f"{len(failures)} failed"))
sys.exit(1 if failures else 0)
