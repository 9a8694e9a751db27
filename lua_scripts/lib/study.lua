-- Helpers shared by the seed studies: finding points and phases in the
-- results of sl.run, and printing numbers with their units.
local sl = require "sluice"
local M = {}

-- The points of `results` whose params match every entry of `where`
-- (compared as text, so {threads = 8} matches the params' "8").
function M.points(results, where)
  local out = {}
  for _, p in ipairs(results) do
    local match = true
    for k, v in pairs(where or {}) do
      if tostring((p.params or {})[k]) ~= tostring(v) then match = false end
    end
    if match then out[#out + 1] = p end
  end
  return out
end

-- The aggregate rate (bytes/s, elbencho's "last done") of `phase` in the
-- first point matching `where`; 0 when missing or failed.
function M.rate(results, where, phase, workload)
  local p = M.points(results, where)[1]
  if p == nil or not p.ok then return 0 end
  local row = sl.phase(p, phase, workload)
  return row and row.last_bytes_per_s or 0
end

-- The same for operations per second.
function M.ops(results, where, phase, workload)
  local p = M.points(results, where)[1]
  if p == nil or not p.ok then return 0 end
  local row = sl.phase(p, phase, workload)
  return row and row.last_ops_per_s or 0
end

-- The row of `phase` in the first point matching `where`, or nil.
function M.row(results, where, phase, workload)
  local p = M.points(results, where)[1]
  if p == nil or not p.ok then return nil end
  return sl.phase(p, phase, workload)
end

-- The row of `phase` with the largest rate over every point matching
-- `where` (nil when none ran), e.g. for sl.headline's bound.
function M.best_row(results, where, phase)
  local best = nil
  for _, p in ipairs(M.points(results, where)) do
    local row = p.ok and sl.phase(p, phase) or nil
    if row and row.last_bytes_per_s > (best and best.last_bytes_per_s or 0) then best = row end
  end
  return best
end

-- The largest rate of `phase` over every point matching `where`.
function M.best_rate(results, where, phase)
  local best = M.best_row(results, where, phase)
  return best and best.last_bytes_per_s or 0
end

function M.gbs(bytes_per_s) return string.format("%.2f GB/s", bytes_per_s / 1e9) end
function M.mbs(bytes_per_s) return string.format("%.0f MB/s", bytes_per_s / 1e6) end
function M.kops(ops_per_s) return string.format("%.1f kops/s", ops_per_s / 1e3) end
function M.ratio(a, b)
  if b == nil or b == 0 then return "n/a" end
  return string.format("%.2fx", a / b)
end

-- Concatenates lists of points (results of several sl.run calls).
function M.concat(...)
  local out = {}
  for _, list in ipairs({...}) do
    for _, p in ipairs(list) do out[#out + 1] = p end
  end
  return out
end

-- Counts the failed points and prints why the first failed.
function M.check(results)
  local failed = 0
  for _, p in ipairs(results) do
    if not p.ok then
      if failed == 0 then print("a point failed: " .. tostring(p.error)) end
      failed = failed + 1
    end
  end
  return failed
end

return M
