-- mlperf_dlio_sim_test.sh (ctest mlperf.dlio_sim): MLPerf Storage's unet3d
-- H100 config (lua_scripts/mlperf/unet3d_h100.yaml) through sl.workload.dlio
-- on the simulator at a tiny size: 2 GPUs reading 28 samples of 1 MiB in
-- 2 steps of 7-sample batches each, 0.323 s of compute a step, from one
-- storage server. The run reports the accelerator utilisation (AU). The
-- config's spread of sample sizes is set to 0 so every sample is 1 MiB
-- (TrainEpoch.DrawnSampleSizes* test the spread).
local sl = require "sluice"
local gpu_node = sl.machines.generic{ sockets = 1, gpus = 2, nics = 1, nvmes = 0, nic_gbps = 100 }
local server = sl.machines.generic{ sockets = 1, gpus = 0, nics = 1, nvmes = 2, nic_gbps = 100 }
local cluster = sl.cluster{ machines = {server, gpu_node}, fabric = sl.fabric.infiniband{ gbps = 100 } }
local fs = sl.fs.beegfs{ storage_nodes = {0}, meta_nodes = {0}, mgmt_node = 0, client_nodes = {1},
                         stripe = { chunk = "512KiB", count = 2 } }
local unet = sl.workload.dlio{
  config = "../../../lua_scripts/mlperf/unet3d_h100.yaml",
  overrides = { ["dataset.num_files_train"] = 28, ["dataset.record_length_bytes"] = 1048576, ["train.epochs"] = 1,
                ["dataset.record_length_bytes_stdev"] = 0 },
}
local r = sl.run{ backend = "sim", cluster = cluster, fs = fs, workload = unet, seed = 1 }
local row = sl.phase(r[1], "epoch", "unet3d")
assert(row, "no epoch phase of unet3d: " .. tostring(r[1].error))
print(string.format("dlio: model=%s type=%s au_pct=%.2f au_threshold=%.2f bytes=%d", unet.dlio.model, unet.type,
                    row.extra.au_pct, unet.dlio.au, row.bytes))
