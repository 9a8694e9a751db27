-- mlperf_checkpoint_sim_test.sh (ctest mlperf.checkpoint): MLPerf Storage
-- v2.0's Llama 3 8B checkpointing config (lua_scripts/mlperf/llama3_8b.yaml)
-- through sl.workload.dlio on the simulator, shrunk by overrides to 2 ranks
-- (model.parallelism.data) of a 2-layer model with a small vocabulary and
-- hidden size: 2 checkpoints written with fsync (sync writes), then both read
-- back and verified. The simulator has no client page cache, so the read
-- phase is the read after a cache drop that MLPerf Storage asks for.
local sl = require "sluice"
local gpu_node = sl.machines.generic{ sockets = 1, gpus = 2, nics = 1, nvmes = 0, nic_gbps = 100 }
local server = sl.machines.generic{ sockets = 1, gpus = 0, nics = 1, nvmes = 2, nic_gbps = 100 }
local cluster = sl.cluster{ machines = {server, gpu_node}, fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beegfs{ storage_nodes = {0}, meta_nodes = {0}, mgmt_node = 0, client_nodes = {1},
                         stripe = { chunk = "512KiB", count = 2 } }
local llama = sl.workload.dlio{
  config = "../../../lua_scripts/mlperf/llama3_8b.yaml",
  block_bytes = 1048576,
  overrides = { ["model.parallelism.data"] = 2, ["model.num_layers"] = 2,
                ["model.transformer.vocab_size"] = 1024, ["model.transformer.hidden_size"] = 256,
                ["model.transformer.ffn_hidden_size"] = 512, ["model.transformer.num_attention_heads"] = 8,
                ["model.transformer.num_kv_heads"] = 2,
                ["checkpoint.num_checkpoints_write"] = 2, ["checkpoint.num_checkpoints_read"] = 2 },
}
assert(llama.ranks == 2, "2 ranks to place, not " .. tostring(llama.ranks))
local r = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = llama, seed = 1 }
local write = sl.phase(r[1], "write", "llama_8b")
local read = sl.phase(r[1], "read", "llama_8b")
assert(write and read, "no write or read phase of llama_8b: " .. tostring(r[1].error))
print(string.format("checkpoint: model=%s type=%s ranks=%d shard_bytes=%d sync=%s writes=%d reads=%d", llama.model,
                    llama.type, llama.ranks, llama.shard_bytes, tostring(llama.sync), llama.writes, llama.reads))
