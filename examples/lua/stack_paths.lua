-- stack_paths.lua: one resting stack, three ways to sweep it, residual per sweep.
--
--   LUA_CPATH="build/bindings/lua/?.so" lua5.4 examples/lua/stack_paths.lua [OUTPUT_DIR]
--
-- A 20-box stack of unit masses solved by
--   1. plain dense Gauss-Seidel: the small-world dense path, which assembles A = J H^-1 J^T
--      and sweeps on it (path = "dense");
--   2. the matrix-free sweep, which never assembles A and keeps v = v-hat + Y lambda live
--      (path = "general");
--   3. the matrix-free sweep with Nesterov momentum and gradient restart.
-- SPEC.md section 2 says 1 and 2 are the same iteration, so their residual curves lie on top of
-- each other (this script checks it, to rounding); momentum reaches the same answer in far
-- fewer sweeps. Writes stack_paths.csv and stack_paths.png (gnuplot, log scale).
local steel = require "steel"
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local experiment = require "experiment"

local out = experiment.output_dir(arg[1])
local spec = { height = 20 }
local rows = experiment.stack_rows { spec }
local exact = experiment.stack_exact(spec)
local sweeps = 600

local function run(name, options)
  local batch <close> = steel.batch()
  batch:upload_rows(rows)
  options.iterations, options.record_residual_history = sweeps, true
  batch:set_options(options)
  batch:solve()
  local stats, impulses = batch:stats()[1], batch:impulses()
  local worst = 0
  for k, value in ipairs(impulses) do worst = math.max(worst, math.abs(value / exact[k] - 1)) end
  print(string.format("%-22s path %-7s %4d sweeps, residual %.3e, worst relative impulse error %.2e%s", name,
                      stats.path, stats.sweeps, stats.residual, worst,
                      stats.momentum_restarts > 0 and (", " .. stats.momentum_restarts .. " restarts") or ""))
  return batch:residual_history(0), stats
end

local dense, dense_stats = run("dense Gauss-Seidel", { path = "dense" })
local general, general_stats = run("matrix-free", { path = "general" })
local momentum = run("matrix-free + momentum", { path = "general", nesterov_momentum = true })
assert(dense_stats.path == "dense" and general_stats.path == "general", "the forced paths were taken")

-- The same iteration: the two curves agree to rounding, sweep by sweep.
local largest = 0
for k = 1, sweeps do
  largest = math.max(largest, math.abs(dense[k] - general[k]) / math.max(dense[k], 1e-300))
end
print(string.format("dense vs matrix-free: largest relative difference of the residuals %.2e", largest))
assert(largest < 1e-9, "dense Gauss-Seidel and the matrix-free sweep must agree to rounding")

local index = {}
for k = 1, sweeps do index[k] = k end
local csv = experiment.write_csv(out .. "/stack_paths.csv", { "sweep", "dense", "general", "momentum" },
                                 { index, dense, general, momentum }, true)
local png = experiment.plot(experiment.script_dir() .. "/stack_paths.gp", out, out .. "/stack_paths.png")
print("wrote " .. csv .. " and " .. png)
