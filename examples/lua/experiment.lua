-- experiment.lua: what the solve experiments in this folder share: the resting 1D stack as rows
-- tables, a small dense solver for predictions, CSV output, and plotting with gnuplot.
--
--   local experiment = require "experiment"   -- the scripts put their own folder on package.path
local experiment = {}

-- The folder of the running script (arg[0]), where its gnuplot script lives.
function experiment.script_dir()
  local script = arg and arg[0] or ""
  return script:match("^(.*)/[^/]*$") or "."
end

-- The output folder: the script's first argument, or the current folder. Created if missing.
function experiment.output_dir(dir)
  dir = dir or "."
  if dir:find("'", 1, true) then error("experiment: output folder names with a single quote are not supported") end
  assert(os.execute("mkdir -p '" .. dir .. "'"), "experiment: cannot create " .. dir)
  return dir
end

-- Box masses of a stack, bottom (index 1) to top: geometric from bottom_mass to top_mass
-- (examples/scenes/rows_scenes.cpp does the same in C++).
function experiment.stack_masses(spec)
  local height, bottom, top = spec.height, spec.bottom_mass or 1.0, spec.top_mass or 1.0
  local masses = {}
  local ratio = height > 1 and (top / bottom) ^ (1 / (height - 1)) or 1
  for k = 1, height do masses[k] = bottom * ratio ^ (k - 1) end
  masses[height] = top
  return masses
end

-- Contact k carries the weight of boxes k..height for one step: g*dt*sum(m).
function experiment.stack_exact(spec)
  local masses, g_dt = experiment.stack_masses(spec), (spec.gravity or 9.81) * (spec.dt or 1 / 60)
  local impulses, above = {}, 0
  for k = spec.height, 1, -1 do
    above = above + masses[k]
    impulses[k] = g_dt * above
  end
  return impulses
end

-- The rows of one or more resting stacks, one world each, as a steel rows table. Box k has one
-- DOF (its vertical velocity); contact k pushes box k up and box k-1 down (the ground for k = 1):
-- J = [-1, +1] over the two adjacent DOFs, one block, and Y = H^-1 J^T = [-1/m_{k-1}, 1/m_k].
function experiment.stack_rows(specs)
  local rows = { world_dof_counts = {}, world_row_counts = {}, unconstrained_velocity = {}, block_offset = {},
                 block_length = {}, jacobian = {}, response = {}, bias = {}, kind = {} }
  local function push(list, ...) for _, v in ipairs { ... } do list[#list + 1] = v end end
  for _, spec in ipairs(specs) do
    local masses, g_dt = experiment.stack_masses(spec), (spec.gravity or 9.81) * (spec.dt or 1 / 60)
    push(rows.world_dof_counts, spec.height)
    push(rows.world_row_counts, spec.height)
    for k = 1, spec.height do
      push(rows.unconstrained_velocity, -g_dt)
      push(rows.bias, 0.0)
      push(rows.kind, "contact_normal")
      if k == 1 then
        push(rows.block_offset, 0, 0)
        push(rows.block_length, 1, 0)
        push(rows.jacobian, 1.0)
        push(rows.response, 1.0 / masses[1])
      else
        push(rows.block_offset, k - 2, 0) -- world-local, 0-based DOF: box k-1
        push(rows.block_length, 2, 0)
        push(rows.jacobian, -1.0, 1.0)
        push(rows.response, -1.0 / masses[k - 1], 1.0 / masses[k])
      end
    end
  end
  return rows
end

-- Solves the n x n system M x = b (M a table of rows) by Gaussian elimination with partial
-- pivoting: small predictions only.
function experiment.solve_dense(M, b)
  local n, A, x = #b, {}, {}
  for i = 1, n do
    A[i] = {}
    for j = 1, n do A[i][j] = M[i][j] end
    A[i][n + 1] = b[i]
  end
  for col = 1, n do
    local pivot = col
    for i = col + 1, n do if math.abs(A[i][col]) > math.abs(A[pivot][col]) then pivot = i end end
    A[col], A[pivot] = A[pivot], A[col]
    for i = col + 1, n do
      local f = A[i][col] / A[col][col]
      for j = col, n + 1 do A[i][j] = A[i][j] - f * A[col][j] end
    end
  end
  for i = n, 1, -1 do
    local s = A[i][n + 1]
    for j = i + 1, n do s = s - A[i][j] * x[j] end
    x[i] = s / A[i][i]
  end
  return x
end

-- Writes a CSV file: `header` a list of column names, `columns` a list of equally indexed
-- sequences (a missing value, or a non-positive one when `positive_only`, is left empty:
-- gnuplot skips it, which log axes need).
function experiment.write_csv(path, header, columns, positive_only)
  local file = assert(io.open(path, "w"))
  file:write(table.concat(header, ","), "\n")
  local length = 0
  for _, column in ipairs(columns) do length = math.max(length, #column) end
  for i = 1, length do
    local cells = {}
    for c, column in ipairs(columns) do
      local value = column[i]
      if value == nil or (positive_only and type(value) == "number" and value <= 0) then
        cells[c] = ""
      elseif math.type(value) == "float" then
        cells[c] = string.format("%.17g", value)
      else
        cells[c] = tostring(value)
      end
    end
    file:write(table.concat(cells, ","), "\n")
  end
  file:close()
  return path
end

local function size_of(path)
  local file = io.open(path, "rb")
  if not file then return 0 end
  local size = file:seek("end")
  file:close()
  return size
end

-- Runs `gnuplot -e "data='DIR'; out='PNG'" SCRIPT` and checks that the PNG is there and not
-- empty. gnuplot (Debian: gnuplot-nox) must be installed.
function experiment.plot(script, data_dir, png)
  if png:find("'", 1, true) or data_dir:find("'", 1, true) then error("experiment: paths with ' are not supported") end
  os.remove(png)
  local command = string.format([[gnuplot -e "data='%s'; out='%s'" '%s']], data_dir, png, script)
  local ok = os.execute(command)
  if not ok then error("experiment: gnuplot failed (is it installed? apt-get install gnuplot-nox): " .. command) end
  if size_of(png) == 0 then error("experiment: gnuplot wrote no " .. png) end
  return png
end

return experiment
