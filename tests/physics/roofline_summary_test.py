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
- a point the run-time cap held below saturation says so and still counts;
- client_rail_misfit: each client's counted bytes per socket against the
  NUMA-local rule (a third per socket of 3; a bounced GPU buffer's on socket
  0; at least a quarter on each of 2 sockets with NICs of 4; 8 threads'
  buffers on 3 sockets as 3, 3, 2; not where a NIC may fill), and a point
  whose rails are off the rule fails whatever its ratio.
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
         "client_switches_per_socket": 3, "clients": 2, "buffer": "host", "gds": "off",
         "threads": 12, "chunks_in_flight": 96, "rail_connections": 96}
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

def summarize(runs, *flags):
    """The summarizer run on a results file holding `runs`: its completed process."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "results.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"runs": runs}, f)
        return subprocess.run([sys.executable, os.path.join(HERE, "roofline_summary.py"), *flags, path],
                              capture_output=True, text=True)


# The whole summarizer on a results file: a capped point says it is below saturation.
run = {"ok": True, "params": {k: str(v) for k, v in client(seed=1, index=7, servers=4, threads=4,
                                                            iodepth=2, saturating_blocks=23).items()},
       "phases": [{"phase": "read", "last_bytes_per_s": 0.5 * bound, "bound_bytes_per_s": bound,
                   "placed_bound_bytes_per_s": bound, "binding_resource": "nic port: node4/nic0->switch"}]}
out = summarize([run], "--expected", os.path.join(HERE, "roofline_expected.json"))
check("a miss below its ceiling's floor fails the summary", out.returncode == 1)
check("the capped point says so", "below saturation: 8 of 23 blocks in flight per client" in out.stdout)
check("and is counted", "unexplained=1" in out.stdout)

# A placement that beat the equal shares: the rate is above the equal shares'
# bound and under the placed one, which is its ceiling (not above a bound).
beat = {"ok": True, "params": run["params"],
        "phases": [{"phase": "read", "last_bytes_per_s": 1.0 * bound, "bound_bytes_per_s": 0.99 * bound,
                    "placed_bound_bytes_per_s": 1.01 * bound, "binding_resource": "fabric: leaf0->spine0"}]}
out = summarize([beat])
check("a placement that beat the equal shares is judged by its placed bound",
      out.returncode == 0 and "ABOVE BOUND" not in out.stdout and "unexplained=0" in out.stdout)

# The clients' rails as counted (client.<op>_bytes.nic.<node>.<nic>) against
# the NUMA-local rule: 3 sockets with 8 NICs (3, 3, 2): each socket a third.
def rails(per_nic, phase="read", node=5):
    return {f"client.{phase}_bytes.nic.{node}.{i}": b for i, b in enumerate(per_nic)}


thirds = rails([1, 1, 1, 1, 1, 1, 1.5, 1.5])  # sockets 0, 1: 3 NICs of 1; socket 2: 2 of 1.5
check("a third per socket follows the rule", rs.client_rail_misfit(client(), thirds, "read") is None)
check("counts of the other phase are not this one's", rs.client_rail_misfit(client(), thirds, "write") is None)
check("an even split over the 8 NICs is off (socket 0 carries 3/8)",
      "node 5 socket 0 carried 0.375" in (rs.client_rail_misfit(client(), rails([1] * 8), "read") or ""))
check("a bounced GPU buffer's bytes all on socket 0 follow the rule",
      rs.client_rail_misfit(client(buffer="gpu"), rails([1, 1, 1, 0, 0, 0, 0, 0]), "read") is None)
check("some of them on socket 1 are off",
      rs.client_rail_misfit(client(buffer="gpu"), rails([1, 1, 1, 1, 0, 0, 0, 0]), "read") is not None)
check("GPU buffers with GDS are not checked",
      rs.client_rail_misfit(client(buffer="gpu", gds="on"), rails([1] * 8), "read") is None)
# 4 sockets, 2 NICs (sockets 0 and 2): each carries at least a quarter, the
# NIC-less sockets' threads go wherever.
check("a socket without NICs hands its threads' bytes on",
      rs.client_rail_misfit(client(client_sockets=4, client_nics=2), rails([3, 1]), "read") is None)
check("but a socket with NICs carries at least its own threads' share",
      rs.client_rail_misfit(client(client_sockets=4, client_nics=2), rails([9, 1]), "read") is not None)
check("8 threads on 3 sockets hold their buffers as 3, 3, 2",
      rs.client_rail_misfit(client(threads=8), rails([1, 1, 1, 1, 1, 1, 1, 1]), "read") is None)
check("where a NIC may fill (12 connections, 96 chunks in flight) the choice is not checked",
      rs.client_rail_misfit(client(rail_connections=12), rails([1] * 8), "read") is None)
check("a NIC the client does not have is named",
      "no such NIC" in (rs.client_rail_misfit(client(), rails([1] * 9), "read") or ""))
off = dict(run, counters=rails([1] * 8),
           phases=[dict(run["phases"][0], last_bytes_per_s=0.95 * bound)])
out = summarize([off])
check("a point whose clients' rails are off the rule fails, whatever its ratio",
      out.returncode == 1 and "CLIENT RAILS OFF POLICY" in out.stdout and "unexplained=1" in out.stdout)

print("roofline summary: " + ("ok" if not failures else f"{len(failures)} failed"))
sys.exit(1 if failures else 0)
