#!/usr/bin/env python3
# A stand-in for `sluice node` in the node-process tests
# (tests/scenarios/cluster/node_process_test.cpp): it makes run_node's
# collectives (node_collectives of its --config) over the bootstrap socket
# (fd 3) with the protocol of scenarios/deploy/socket_bootstrap.cpp, and
# sends a node document that
# carries its command line and the server settings it was given
# (--fs-settings, as JSON). FAKE_NODE_CRASH=1: it exits with code 5 right
# after "servers-up", as a node process that crashes.
import json
import os
import sys

args = sys.argv[1:]
rails = [args[i + 1] for i, a in enumerate(args) if a == "--listen-rails"]
settings = [json.load(open(args[i + 1])) for i, a in enumerate(args) if a == "--fs-settings"]
channel = os.fdopen(3, "r+b", buffering=0)


def ask(op, name, data=""):
    channel.write((json.dumps({"op": op, "name": name, "data": data}) + "\n").encode())
    line = b""
    while not line.endswith(b"\n"):
        byte = channel.read(1)
        if not byte:
            sys.exit(3)
        line += byte
    reply = json.loads(line)
    if not reply["ok"]:
        sys.exit(4)
    return reply.get("all", [])


table = ask("all_gather", "", " ".join(rails) or "127.0.0.1:5001")
ask("barrier", "mgmt-up")
ask("barrier", "servers-up")
if os.environ.get("FAKE_NODE_CRASH") == "1":
    sys.exit(5)
# After each workload but the last, run_node's all_gather (with no name on the socket).
config = json.load(open(args[args.index("--config") + 1]))
for _ in config.get("later_workloads", []):
    ask("all_gather", "", "")
ask("barrier", "clients-done")
ask("barrier", "stopping")
ask("gather", "", json.dumps({"node": 1, "ok": True, "counters": {}, "argv": args, "table": table,
                               "fs_settings": settings[0] if settings else None}))
