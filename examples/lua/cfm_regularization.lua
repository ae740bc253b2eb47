-- cfm_regularization.lua: what cfm and regularization do to convergence and to the answer.
--
--   LUA_CPATH="build/bindings/lua/?.so" lua5.4 examples/lua/cfm_regularization.lua [OUTPUT_DIR]
--
-- A 10-box stack of unit masses (a contact between two boxes has J.Y = 2, the ground contact 1):
--   - cfm only enlarges each row's denominator J.Y + cfm: the sweep relaxes (moves (d - cfm)/d
--     of the way) and converges more slowly, to the SAME impulses (SPEC.md section 5);
--   - contact_regularization c makes the contacts soft: each satisfies J.v + c*lambda = 0, so
--     the answer MOVES, to the solution of (A + c I) lambda = -J v-hat, which this script also
--     computes densely as the prediction and checks against.
-- Writes cfm_residuals.csv, regularization_residuals.csv, converged_answer.csv and
-- cfm_regularization.png (three panels).
local steel = require "steel"
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local experiment = require "experiment"

local out = experiment.output_dir(arg[1])
local spec = { height = 10 }
local rows = experiment.stack_rows { spec }
local exact = experiment.stack_exact(spec)
local n = spec.height

local function solve(options)
  local batch <close> = steel.batch()
  batch:upload_rows(rows)
  options.record_residual_history = true
  batch:set_options(options)
  batch:solve()
  return batch:impulses(), batch:residual_history(0), batch:stats()[1]
end

-- 1. Convergence: residual per sweep for several cfm, then several c.
local sweeps = 1500
local cfms, cs = { 0, 0.5, 2, 8 }, { 0, 0.1, 0.5, 2 }
local cfm_curves, c_curves = {}, {}
for i, cfm in ipairs(cfms) do
  local _, history = solve { iterations = sweeps, cfm = cfm }
  cfm_curves[i] = history
  print(string.format("cfm = %-4g residual after %d sweeps: %.3e", cfm, sweeps, history[sweeps]))
end
for i, c in ipairs(cs) do
  local _, history = solve { iterations = sweeps, contact_regularization = c }
  c_curves[i] = history
  print(string.format("c   = %-4g residual after %d sweeps: %.3e", c, sweeps, history[sweeps]))
end
local index = {}
for k = 1, sweeps do index[k] = k end
experiment.write_csv(out .. "/cfm_residuals.csv", { "sweep", "cfm=0", "cfm=0.5", "cfm=2", "cfm=8" },
                     { index, table.unpack(cfm_curves) }, true)
experiment.write_csv(out .. "/regularization_residuals.csv", { "sweep", "c=0", "c=0.1", "c=0.5", "c=2" },
                     { index, table.unpack(c_curves) }, true)

-- The Delassus matrix A = J H^-1 J^T of the stack, from the same J and Y the rows carry (one
-- block per row; row k's block starts at DOF block_offset[2k-1]), and J v-hat.
local A, rhs = {}, {}
local J, Y, first = {}, {}, 1
for k = 1, n do
  J[k], Y[k] = {}, {}
  for d = 1, n do J[k][d], Y[k][d] = 0, 0 end
  for j = 0, rows.block_length[2 * k - 1] - 1 do
    local dof = rows.block_offset[2 * k - 1] + j + 1
    J[k][dof], Y[k][dof] = rows.jacobian[first], rows.response[first]
    first = first + 1
  end
end
for i = 1, n do
  A[i], rhs[i] = {}, 0
  for j = 1, n do
    A[i][j] = 0
    for d = 1, n do A[i][j] = A[i][j] + J[i][d] * Y[j][d] end
  end
  for d = 1, n do rhs[i] = rhs[i] - J[i][d] * rows.unconstrained_velocity[d] end
end
local function predicted(c)
  local M = {}
  for i = 1, n do
    M[i] = {}
    for j = 1, n do M[i][j] = A[i][j] + (i == j and c or 0) end
  end
  return experiment.solve_dense(M, rhs)
end

-- 2. The converged answer, bottom and top contact, as a fraction of the rigid closed form.
local values = { 0, 0.05, 0.1, 0.2, 0.5, 1, 2, 4 }
local columns = { {}, {}, {}, {}, {}, {}, {} }
local worst = 0
for i, x in ipairs(values) do
  local with_cfm = solve { iterations = 100000, tolerance = 1e-13, cfm = x, nesterov_momentum = true }
  local with_c = solve { iterations = 100000, tolerance = 1e-13, contact_regularization = x, nesterov_momentum = true }
  local prediction = predicted(x)
  for k = 1, n do
    worst = math.max(worst, math.abs(with_cfm[k] / exact[k] - 1), math.abs(with_c[k] - prediction[k]) / exact[k])
  end
  local row = { x, with_cfm[1] / exact[1], with_cfm[n] / exact[n], with_c[1] / exact[1], with_c[n] / exact[n],
                prediction[1] / exact[1], prediction[n] / exact[n] }
  for c = 1, #columns do columns[c][i] = row[c] end
  print(string.format("x = %-4g  bottom/exact: cfm %.9f, c %.9f (predicted %.9f)", x, row[2], row[4], row[6]))
end
print(string.format("largest deviation from the predictions (cfm: the rigid answer; c: (A + cI)^-1 (-J v-hat)): %.2e",
                    worst))
assert(worst < 1e-8, "the converged answers must match the predictions")
experiment.write_csv(out .. "/converged_answer.csv",
                     { "x", "cfm_bottom", "cfm_top", "c_bottom", "c_top", "predicted_c_bottom", "predicted_c_top" },
                     columns)

local png = experiment.plot(experiment.script_dir() .. "/cfm_regularization.gp", out, out .. "/cfm_regularization.png")
print("wrote the CSVs and " .. png .. " in " .. out)
