-- Study 4 (docs/seeds.md#gpu-rdma-recording-over-roce): GPU RDMA recording over
-- 25 GbE RoCE (the Critical I/O paper). A GPU host and a StoreEngine-like
-- recorder with NVMe, joined by 25 GbE; 1 MiB GPU buffers (128 x 1024 complex
-- floats) recorded (GPU -> recorder, RDMA SEND) and played back (recorder ->
-- GPU, RDMA READ), GPU-direct, no CPU staging; limits: PCIe gen3 x8 and the
-- 25 GbE ports.
-- One port: a GPU host whose NIC has a single 25 GbE port on gen3 x8.
-- Two ports: the paper's dual-port NIC (both ports share the gen3 x8 link).
-- Seed: record 3051 / 3028 MB/s per port alone, 6057 MB/s both;
--       playback 3055 / 3054 MB/s alone, 6005 MB/s both.
-- Reduced run (CI): --set buffers=64
local sl = require "sluice"
local study = require "study"

local P = sl.params{
  buffers = {"1 MiB buffers streamed per direction", 2048},
  in_flight = {"GPU buffers in flight (CUDA streams overlapping transfers); 8 cannot fill two ports", 16},
  drives = {"NVMe drives in the recorder", 4},
  fft_us = {"GPU compute (cuFFT) per buffer, microseconds", 0},
}

local function stream(direction)
  return sl.workload.gpu_stream{
    label = direction,
    direction = direction,
    buffer_bytes = "1MiB",
    buffers = P.buffers,
    buffers_in_flight = P.in_flight,
    compute_ns_per_buffer = P.fft_us * 1000,
    -- playback reads back what record wrote (same file), as the recorder does
    prepare_playback_file = false,
  }
end

local recorder = sl.machines.critical_io_recorder{ nvme = P.drives }
local hosts = {
  one_port = sl.machines.generic{ gpus = 1, nics = 1, nvmes = 0, pcie_gen = 3, nic_lanes = 8, nic_gbps = 25,
                                  gpu_memory_bytes = "16GiB" },
  two_ports = sl.machines.critical_io_gpu_host(),
}

local ports = { one_port = 1, two_ports = 2 }
local results = {}
for _, name in ipairs({"one_port", "two_ports"}) do
  local cluster = sl.cluster{ machines = { hosts[name], recorder },
                              fabric = sl.fabric.ethernet{ gbps = 25, latency = "1us" } }
  local fs = sl.fs.beegfs{ storage_nodes = {1}, meta_nodes = {1}, mgmt_node = 1, client_nodes = {0},
                           gds = "on", stripe = { chunk = "1MiB", count = P.drives },
                           -- the buffers in flight spread over the ports (one RDMA stream per port)
                           rail_connections = math.max(1, P.in_flight // ports[name]) }
  results[name] = sl.run{ backend = "sim", cluster = cluster, fs = fs,
                          workloads = { stream("record"), stream("playback") }, seed = 1,
                          label = (name:gsub("_", " ")), params = { ports = ports[name] } }
  sl.report{ results[name], title = "GPU host with " .. name:gsub("_", " ") }
end

print("")
sl.headlines("next to the Critical I/O paper's figures")
local function mb(name, phase) return study.rate(results[name], {}, phase) end
local function row(name, phase) return study.row(results[name], {}, phase) end
sl.headline("record, one port", study.mbs(mb("one_port", "record")), "3051 MB/s", row("one_port", "record"))
sl.headline("record, two ports", study.mbs(mb("two_ports", "record")), "6057 MB/s", row("two_ports", "record"))
sl.headline("playback, one port", study.mbs(mb("one_port", "playback")), "3055 MB/s", row("one_port", "playback"))
sl.headline("playback, two ports", study.mbs(mb("two_ports", "playback")), "6005 MB/s", row("two_ports", "playback"))
sl.headline("record, two ports / one port", study.ratio(mb("two_ports", "record"), mb("one_port", "record")), "~2.0x")
-- The paper's figures, MB/s (port 1 alone; both ports at once).
local published = { record = { one_port = 3051e6, two_ports = 6057e6 },
                    playback = { one_port = 3055e6, two_ports = 6005e6 } }
for _, phase in ipairs({"record", "playback"}) do
  for _, name in ipairs({"one_port", "two_ports"}) do
    sl.claim{string.format("%s, %s, bytes/s", phase, name:gsub("_", " ")), measured = mb(name, phase),
             seed_value = published[phase][name], seed = string.format("%.0f MB/s", published[phase][name] / 1e6)}
  end
end
study.check(study.concat(results.one_port, results.two_ports))
