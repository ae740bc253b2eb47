-- stack_scaling.lua: the same problem at growing stack heights and mass ratios.
--
--   LUA_CPATH="build/bindings/lua/?.so" lua5.4 examples/lua/stack_scaling.lua [OUTPUT_DIR]
--
-- Resting stacks of 2 to 64 boxes whose masses grow geometrically from 1 at the bottom to
-- `ratio` at the top (heavy on light: the hard case), ratios 1, 10 and 100. Every (height,
-- ratio) is one world of a single batch, so one solve runs them all and each world stops on its
-- own at the tolerance. Plain Gauss-Seidel needs a number of sweeps that grows fast with height
-- and ratio (the load reaches the ground slowly); Nesterov momentum cuts it down.
-- Writes stack_scaling.csv and stack_scaling.png (sweeps to tolerance, and the error left).
local steel = require "steel"
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local experiment = require "experiment"

local out = experiment.output_dir(arg[1])
local heights, ratios = { 2, 4, 8, 16, 32, 64 }, { 1, 10, 100 }
local tolerance, cap = 1e-6, 30000

local specs = {}
for _, ratio in ipairs(ratios) do
  for _, height in ipairs(heights) do specs[#specs + 1] = { height = height, top_mass = ratio } end
end
local rows = experiment.stack_rows(specs)

local function solve(momentum)
  local batch <close> = steel.batch { world_count = #specs, thread_count = 0 }
  batch:upload_rows(rows)
  batch:set_options { iterations = cap, tolerance = tolerance, nesterov_momentum = momentum }
  batch:solve()
  return batch:stats(), batch:impulses()
end

-- Largest relative error of world w's impulses against the closed form.
local function impulse_error(impulses, w)
  local first = 0
  for k = 1, w - 1 do first = first + specs[k].height end
  local worst = 0
  for k, exact in ipairs(experiment.stack_exact(specs[w])) do
    worst = math.max(worst, math.abs(impulses[first + k] / exact - 1))
  end
  return worst
end

local plain_stats, plain_impulses = solve(false)
local momentum_stats, momentum_impulses = solve(true)
local columns = { {}, {}, {}, {}, {}, {}, {}, {} }
print(string.format("sweeps to a residual of %g m/s (at most %d):", tolerance, cap))
print("height  ratio   plain  momentum   plain error  momentum error")
for w, spec in ipairs(specs) do
  local plain, momentum = plain_stats[w], momentum_stats[w]
  local row = { spec.height, spec.top_mass, plain.sweeps, plain.converged and 1 or 0, momentum.sweeps,
                momentum.converged and 1 or 0, impulse_error(plain_impulses, w), impulse_error(momentum_impulses, w) }
  for c = 1, #columns do columns[c][w] = row[c] end
  print(string.format("%6d %6g %7d%s %8d%s %12.2e %14.2e", spec.height, spec.top_mass, plain.sweeps,
                      plain.converged and " " or "+", momentum.sweeps, momentum.converged and " " or "+", row[7],
                      row[8]))
  assert(momentum.converged, "momentum reaches the tolerance on every stack here")
end
print("(+: stopped at the cap without reaching the tolerance)")

local csv = experiment.write_csv(out .. "/stack_scaling.csv",
                                 { "height", "ratio", "plain_sweeps", "plain_converged", "momentum_sweeps",
                                   "momentum_converged", "plain_error", "momentum_error" }, columns)
local png = experiment.plot(experiment.script_dir() .. "/stack_scaling.gp", out, out .. "/stack_scaling.png")
print("wrote " .. csv .. " and " .. png)
