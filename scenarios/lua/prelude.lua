-- The parts of the `sluice` module written in Lua: reports and small helpers
-- over result tables (sl.phase, sl.report, report:plot, sl.mlperf's search:plot).
--
-- scenarios/CMakeLists.txt embeds this file at build time (generated header
-- scenarios/lua/prelude_lua.hpp); sluice_module.cpp loads it as the chunk
-- "=sluice" with the module table (the C functions) as its argument, so an
-- error here reads "sluice:LINE:" with this file's line numbers.
local sl = ...
function sl.phase(point, phase, workload)
  for _, row in ipairs(point.phases or {}) do
    if row.phase == phase and (workload == nil or row.workload == workload) then return row end
  end
  return nil
end

local function flatten(args)
  local points = {}
  for _, r in ipairs(args) do
    if type(r) ~= "table" then error("sl.report: expected results of sl.run, not a " .. type(r), 3) end
    if r.phases ~= nil or r.ok ~= nil then
      points[#points + 1] = r
    else
      for _, p in ipairs(r) do points[#points + 1] = p end
    end
  end
  return points
end

local function fmt(x)
  if x == nil then return "" end
  if type(x) ~= "number" then return tostring(x) end
  if x ~= x then return "-" end  -- NaN: not measured
  if math.abs(x) >= 1000 then return string.format("%.0f", x) end
  return string.format("%.3g", x)
end

-- Orders parameter values: numbers and sizes by magnitude, the rest as text.
local function magnitude(v)
  local n = tonumber(v)
  if n then return n end
  local ok, bytes = pcall(sl.size, v)
  if ok then return bytes end
  return nil
end
local function before(a, b)
  local ma, mb = magnitude(a), magnitude(b)
  if ma and mb then return ma < mb end
  return tostring(a) < tostring(b)
end

local Report = {}
Report.__index = Report
function Report:table() return self end
-- report:plot("name.svg" [, {x = param, y = "GB/s"|"kops/s", title =}]):
-- one curve per workload/phase (and per value of the other varying
-- parameters) of its rate against a numeric parameter; SVG + PNG in --out.
function Report:plot(name, opts)
  opts = opts or {}
  if type(name) ~= "string" then error("report:plot(file): give a file name such as \"sweep.svg\"", 2) end
  local function numeric(k)
    for _, p in ipairs(self.points) do
      local v = (p.params or {})[k]
      if v == nil or magnitude(v) == nil then return false end
    end
    return true
  end
  local x = opts.x
  if x == nil then
    for _, k in ipairs(self.keys) do if numeric(k) then x = k break end end
  elseif not numeric(x) then
    error("report:plot: parameter \"" .. tostring(x) .. "\" is not numeric in every point", 2)
  end
  local metric = opts.y
  if metric == nil then
    metric = "kops/s"
    for _, p in ipairs(self.points) do
      for _, ph in ipairs(p.ok and p.phases or {}) do if (ph.last_bytes_per_s or 0) > 0 then metric = "GB/s" end end
    end
  end
  if metric ~= "GB/s" and metric ~= "kops/s" then error("report:plot: y must be \"GB/s\" or \"kops/s\"", 2) end
  local curves, order = {}, {}
  for i, p in ipairs(self.points) do
    if p.ok then
      local others = {}
      for _, k in ipairs(self.keys) do
        if k ~= x then others[#others + 1] = k .. "=" .. tostring((p.params or {})[k]) end
      end
      for _, ph in ipairs(p.phases or {}) do
        local y = metric == "GB/s" and ph.last_bytes_per_s / 1e9 or ph.last_ops_per_s / 1e3
        if y == y and y > 0 then
          local key = ph.workload .. "/" .. ph.phase
          if #others > 0 then key = key .. " " .. table.concat(others, " ") end
          if curves[key] == nil then curves[key] = {title = key, x = {}, y = {}}; order[#order + 1] = key end
          local c = curves[key]
          c.x[#c.x + 1] = x and magnitude(p.params[x]) or i
          c.y[#c.y + 1] = y
        end
      end
    end
  end
  local series = {}
  for _, key in ipairs(order) do series[#series + 1] = curves[key] end
  if #series == 0 then
    print("(plot " .. name .. " not drawn: no successful phase with a " .. metric .. " rate)")
    return self
  end
  local lo, hi = math.huge, 0
  for _, c in ipairs(series) do
    for _, v in ipairs(c.x) do lo = math.min(lo, v); hi = math.max(hi, v) end
  end
  sl._draw_plot{file = name, title = opts.title or self.title or name, x_label = x or "point",
                y_label = metric, log_x = lo > 0 and hi / lo >= 16, series = series}
  return self
end

-- sl.mlperf's result (sluice_module.cpp) with search:plot("au.svg" [, {title =}]):
-- the AU (%) of every probe against the accelerators (all clients together),
-- one curve per client count, and the threshold as a line; SVG + PNG in --out.
local Mlperf = {}
Mlperf.__index = Mlperf
function Mlperf:plot(name, opts)
  opts = opts or {}
  if type(name) ~= "string" then error("search:plot(file): give a file name such as \"au.svg\"", 2) end
  local curves, order, lo, hi = {}, {}, math.huge, 0
  for _, p in ipairs(self.probes) do
    local key = p.clients .. (p.clients == 1 and " client" or " clients")
    if curves[key] == nil then curves[key] = {title = key, points = {}}; order[#order + 1] = key end
    local c = curves[key]
    c.points[#c.points + 1] = {p.accelerators, 100 * p.au}
    lo, hi = math.min(lo, p.accelerators), math.max(hi, p.accelerators)
  end
  local series = {}
  for _, key in ipairs(order) do
    local c = curves[key]
    table.sort(c.points, function(a, b) return a[1] < b[1] end)  -- probes run out of order (bisection)
    local x, y = {}, {}
    for i, pt in ipairs(c.points) do x[i], y[i] = pt[1], pt[2] end
    series[#series + 1] = {title = c.title, x = x, y = y}
  end
  if #series == 0 then
    print("(plot " .. name .. " not drawn: no probe)")
    return self
  end
  series[#series + 1] = {title = string.format("AU threshold %g%%", 100 * self.au_threshold), x = {lo, hi},
                         y = {100 * self.au_threshold, 100 * self.au_threshold}}
  sl._draw_plot{file = name, title = opts.title or (self.workload .. ": AU against accelerators"),
                x_label = "accelerators (all clients)", y_label = "AU %", log_x = hi / lo >= 16, series = series}
  return self
end
local mlperf = sl.mlperf
-- Its methods go in as a second argument (errors name the script's line: caller_where skips this chunk).
function sl.mlperf(args) return mlperf(args, Mlperf) end

function sl.report(args)
  if type(args) ~= "table" then error("sl.report: expected {results, ...}", 2) end
  local points = flatten(args)
  local wanted = nil
  if args.phases then
    wanted = {}
    for _, p in ipairs(args.phases) do wanted[p] = true end
  end
  -- Parameters that differ between the points become columns.
  local keys, seen = {}, {}
  for _, p in ipairs(points) do
    for k, v in pairs(p.params or {}) do
      if seen[k] == nil then seen[k] = v elseif seen[k] ~= v then seen[k] = false end
    end
  end
  for k, v in pairs(seen) do if v == false then keys[#keys + 1] = k end end
  table.sort(keys)
  if args.columns then keys = args.columns end
  -- Rows ordered by the columns' values (stable: ties keep the run order).
  local order = {}
  for i, p in ipairs(points) do order[i] = {p = p, i = i} end
  table.sort(order, function(x, y)
    for _, k in ipairs(keys) do
      local a, b = (x.p.params or {})[k], (y.p.params or {})[k]
      if a ~= b and a ~= nil and b ~= nil then return before(a, b) end
    end
    return x.i < y.i
  end)
  for i, o in ipairs(order) do points[i] = o.p end
  local header = {}
  for _, k in ipairs(keys) do header[#header + 1] = k end
  for _, h in ipairs({"workload", "phase", "ranks", "GB/s", "kops/s", "p50_us", "p99_us", "done_s"}) do
    header[#header + 1] = h
  end
  local rows = {}
  for _, p in ipairs(points) do
    local lead = {}
    for _, k in ipairs(keys) do lead[#lead + 1] = (p.params or {})[k] or "" end
    if not p.ok then
      local row = {table.unpack(lead)}
      row[#row + 1] = "FAILED: " .. tostring(p.error)
      rows[#rows + 1] = row
    else
      for _, ph in ipairs(p.phases or {}) do
        if wanted == nil or wanted[ph.phase] then
          local row = {table.unpack(lead)}
          for _, cell in ipairs({ph.workload, ph.phase, fmt(ph.ranks), fmt(ph.last_bytes_per_s / 1e9),
                                 fmt(ph.last_ops_per_s / 1e3), fmt(ph.latency_us_p50), fmt(ph.latency_us_p99),
                                 fmt(ph.last_done_s)}) do
            row[#row + 1] = cell
          end
          rows[#rows + 1] = row
        end
      end
    end
  end
  local widths = {}
  for i, h in ipairs(header) do widths[i] = #h end
  for _, row in ipairs(rows) do
    for i, cell in ipairs(row) do
      if i < #row or #row == #header then widths[i] = math.max(widths[i] or 0, #tostring(cell)) end
    end
  end
  local function line(cells)
    local out = {}
    for i, cell in ipairs(cells) do
      local w = widths[i] or 0
      if i == #cells and #cells < #header then w = 0 end
      local text = tostring(cell)
      out[#out + 1] = w > #text and text .. string.rep(" ", w - #text) or text
    end
    return (table.concat(out, "  "):gsub("%s+$", ""))
  end
  if args.title then print(args.title) end
  print(line(header))
  for _, row in ipairs(rows) do print(line(row)) end
  return setmetatable({points = points, rows = rows, header = header, keys = keys, title = args.title}, Report)
end
return sl
