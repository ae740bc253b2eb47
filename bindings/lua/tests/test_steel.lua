-- test_steel.lua: the Lua module `steel`, function by function, against the C API's own results.
--
--   steel_lua_host test_steel.lua REFERENCE.lua      (or lua5.4; ctest runs both)
--
-- REFERENCE.lua is written by steel_lua_reference (make_reference.cpp): problems solved through
-- the C API, inputs and results, in rows mode and (reference.scenes) in scene mode. Here the same
-- inputs go through the binding, from tables and from buffers, and every impulse, velocity,
-- statistic, residual and scene result must be the same bits.
-- Then every error path: each Lua error must carry Steel's own message (or, for what the
-- binding checks itself, name the field or option).
local steel = require "steel"
local checks = require "checks"
local test, equal, raises, same = checks.test, checks.equal, checks.raises, checks.same_sequence

local reference_path = assert(arg[1], "usage: test_steel.lua REFERENCE.lua")
local reference = dofile(reference_path)

-- One resting box (m = 2) falling at 1 m/s: its contact impulse is exactly 2.
local function one_contact()
  return { world_dof_counts = {1}, world_row_counts = {1}, unconstrained_velocity = {-1},
           block_offset = {0, 0}, block_length = {1, 0}, jacobian = {1}, response = {0.5}, bias = {0},
           kind = {"contact_normal"} }
end

local function copy(t)
  local out = {}
  for k, v in pairs(t) do out[k] = type(v) == "table" and copy(v) or v end
  return out
end

-- The rows of a reference case with every array as a typed steel.buffer.
local buffer_types = { world_dof_counts = "uint32", world_row_counts = "uint32", block_offset = "uint32",
                       block_length = "uint32", kind = "int32", normal_row = "int32" }
local function as_buffers(rows)
  local out = {}
  for field, values in pairs(rows) do out[field] = steel.buffer(values, buffer_types[field] or "float64") end
  return out
end

-------------------------------------------------------------------------------- module functions

-- The functions this suite covers. A function added to the module without a test here fails.
test("the module, batch and buffer have exactly the functions this suite tests", function()
  local function names(t)
    local list = {}
    for name in pairs(t) do list[#list + 1] = name end
    table.sort(list)
    return table.concat(list, " ")
  end
  equal(names(steel), "ABI_VERSION abi_version batch buffer build_features default_options load load_string "
        .. "status_string version", "steel")
  local batch <close> = steel.batch()
  local batch_meta = getmetatable(batch)
  equal(names(batch_meta.__index), "body_poses body_velocities close constraint_impulses contact_impulses desc "
        .. "drive_impulses handle impulses integrated_positions is_closed joint_velocities limit_impulses options "
        .. "residual_history save save_string set_capture set_options solve stats upload_rows upload_scene "
        .. "velocities", "batch methods")
  equal(names(batch_meta), "__close __gc __index __name __tostring", "batch metamethods")
  local buffer_meta = getmetatable(steel.buffer(1))
  equal(names(buffer_meta.__methods), "fill totable type", "buffer methods")
  equal(names(buffer_meta), "__index __len __methods __name __newindex __tostring", "buffer metamethods")
end)

test("version, ABI version and build features come from the library", function()
  assert(steel.version():match("^%d+%.%d+%.%d+$"), steel.version())
  equal(math.type(steel.abi_version()), "integer", "abi_version type")
  equal(steel.abi_version(), steel.ABI_VERSION, "library ABI = header ABI")
  local features, bits = steel.build_features()
  equal(features.float32, true, "float32")
  equal(features.float64, true, "float64")
  equal(type(features.cuda), "boolean", "cuda is a boolean")
  equal(bits & 3, 3, "float32 | float64 bits")
  equal((bits & 4) ~= 0, features.cuda, "cuda bit")
end)

test("status_string gives Steel's text for every status", function()
  local expected = { [0] = "ok", [-1] = "invalid argument", [-2] = "invalid handle",
                     [-3] = "ABI version mismatch", [-4] = "buffer too small", [-5] = "unsupported",
                     [-6] = "out of memory", [-7] = "struct version mismatch", [-8] = "no data",
                     [-9] = "internal error", [-100] = "unknown status" }
  for status, text in pairs(expected) do equal(steel.status_string(status), text, "status " .. status) end
  raises({ "number expected" }, steel.status_string, "x")
  raises({ "not a steel_status" }, steel.status_string, 1 << 40)
end)

test("default_options are steel_solve_options_default by SPEC name", function()
  local o = steel.default_options()
  equal(o.iterations, 50, "iterations")
  equal(o.tolerance, 0.0, "tolerance")
  equal(o.cfm, 0.0, "cfm")
  equal(o.path, "auto", "path")
  equal(o.warm_start, true, "warm_start")
  equal(o.contact_regularization, 0.0, "contact_regularization")
  equal(o.nesterov_momentum, false, "nesterov_momentum")
  equal(o.enable_bilateral_preelimination, false, "enable_bilateral_preelimination")
  equal(o.record_residual_history, false, "record_residual_history")
  equal(o.solve_mode, "serial", "solve_mode")
  equal(o.articulated_contact_response, "immediate", "articulated_contact_response")
  local count = 0
  for _ in pairs(o) do count = count + 1 end
  equal(count, 11, "number of options (drive_mode is a scene field)")
end)

-------------------------------------------------------------------------------- the C results

-- Solves a reference case through the binding; `rows` and `out` choose tables or buffers.
local function solve_case(case, rows, use_buffers)
  local batch <close> = steel.batch(case.desc)
  batch:upload_rows(rows)
  local options = steel.default_options()
  for name, value in pairs(case.options) do options[name] = value end
  batch:set_options(options)
  equal(batch:solve(), batch, "solve returns the batch")
  local result = {}
  if use_buffers then
    local impulses, velocities = steel.buffer(#case.impulses), steel.buffer(#case.velocities)
    local returned, count = batch:impulses(impulses)
    equal(returned, impulses, "impulses(buffer) returns the buffer")
    equal(count, #case.impulses, "impulse count")
    _, count = batch:velocities(velocities)
    equal(count, #case.velocities, "velocity count")
    result.impulses, result.velocities = impulses:totable(), velocities:totable()
  else
    local count
    result.impulses, count = batch:impulses()
    equal(count, #case.impulses, "impulse count")
    result.velocities, count = batch:velocities()
    equal(count, #case.velocities, "velocity count")
  end
  result.stats = batch:stats()
  if case.history then
    result.history = {}
    for w = 0, case.desc.world_count - 1 do
      if use_buffers then
        local buffer = steel.buffer(#case.history[w + 1] + 3) -- room to spare is fine
        local _, count = batch:residual_history(w, buffer)
        local values = {}
        for i = 1, count do values[i] = buffer[i] end
        result.history[w + 1] = values
      else
        result.history[w + 1] = batch:residual_history(w)
      end
    end
  end
  return result
end

local function check_case(case, result, how)
  local where = case.name .. " (" .. how .. ")"
  same(result.impulses, case.impulses, where .. ": impulses")
  same(result.velocities, case.velocities, where .. ": velocities")
  equal(#result.stats, case.desc.world_count, where .. ": stats count")
  for w, expected in ipairs(case.stats) do
    local s = result.stats[w]
    for _, field in ipairs { "path", "sweeps", "flags", "residual", "first_residual", "momentum_restarts" } do
      equal(s[field], expected[field], string.format("%s: world %d %s", where, w - 1, field))
    end
    equal(s.converged, expected.flags & 2 ~= 0, where .. ": converged")
    equal(s.nonfinite, expected.flags & 1 ~= 0, where .. ": nonfinite")
  end
  if case.history then
    for w = 1, case.desc.world_count do
      same(result.history[w], case.history[w], string.format("%s: world %d residual history", where, w - 1))
    end
  end
end

for _, case in ipairs(reference) do
  test("the C results, from tables: " .. case.name, function()
    check_case(case, solve_case(case, copy(case.rows), false), "tables")
  end)
  test("the C results, from buffers: " .. case.name, function()
    check_case(case, solve_case(case, as_buffers(case.rows), true), "buffers")
  end)
end

test("the quickstart's answers are the closed forms", function()
  local g_dt = 9.81 / 60
  local case = reference[1]
  equal(case.name, "quickstart", "first case")
  local r = solve_case(case, copy(case.rows), false)
  checks.near(r.impulses[1], 2 * g_dt, 1e-12, "box 0 normal impulse")
  checks.near(r.impulses[2], 5 * g_dt, 1e-12, "box 1 normal impulse")
  checks.near(r.impulses[3], -0.5 * 5 * g_dt, 1e-12, "box 1 friction impulse")
  checks.near(r.velocities[2], 3 - 0.5 * g_dt, 1e-12, "box 1 sliding velocity")
end)

test("row kinds by name and by number give the same rows", function()
  local case = reference[5] -- cone_and_bounds: every kind but friction_box
  local rows = copy(case.rows)
  local names = { [0] = "bilateral", "bounded", "contact_normal", "friction_box", "friction_cone" }
  for i, k in ipairs(rows.kind) do rows.kind[i] = names[k] end
  check_case(case, solve_case(case, rows, false), "kind names")
  local quick = copy(reference[1].rows)
  quick.kind = { "contact_normal", "contact_normal", "friction_box" }
  check_case(reference[1], solve_case(reference[1], quick, false), "kind names")
end)

test("world_count and value_count may be given or left out", function()
  local rows = one_contact()
  rows.world_count, rows.value_count = 1, 1
  local batch <close> = steel.batch()
  batch:upload_rows(rows)
  equal(batch:solve():impulses()[1], 2.0, "impulse")
end)

-------------------------------------------------------------------------------- the batch object

test("desc gives back the create arguments", function()
  local batch <close> = steel.batch { world_count = 3, precision = "float32", backend = "cpu", thread_count = 2 }
  local d = batch:desc()
  equal(d.world_count, 3, "world_count")
  equal(d.precision, "float32", "precision")
  equal(d.backend, "cpu", "backend")
  equal(d.thread_count, 2, "thread_count")
  local defaults <close> = steel.batch()
  d = defaults:desc()
  equal(d.world_count, 1, "default world_count")
  equal(d.precision, "float64", "default precision")
  equal(d.thread_count, 1, "default thread_count")
  local all_cores <close> = steel.batch { thread_count = 0 }
  assert(all_cores:desc().thread_count >= 1, "thread_count 0 resolves to the core count")
end)

test("set_options changes the named options only; options reads them back", function()
  local batch <close> = steel.batch()
  batch:set_options { iterations = 7, path = "dense", nesterov_momentum = true }
  batch:set_options { cfm = 0.25, tolerance = 1e-6, warm_start = false, record_residual_history = 1,
                      contact_regularization = 0.5, enable_bilateral_preelimination = true }
  local o = batch:options()
  equal(o.iterations, 7, "iterations kept")
  equal(o.path, "dense", "path kept")
  equal(o.nesterov_momentum, true, "momentum kept")
  equal(o.cfm, 0.25, "cfm")
  equal(o.tolerance, 1e-6, "tolerance")
  equal(o.warm_start, false, "warm_start")
  equal(o.record_residual_history, true, "record_residual_history from 1")
  equal(o.contact_regularization, 0.5, "contact_regularization")
  equal(o.enable_bilateral_preelimination, true, "preelimination")
  batch:set_options { nesterov_momentum = 0, path = "general" }
  equal(batch:options().nesterov_momentum, false, "0 turns a flag off")
  equal(batch:options().path, "general", "path general")
  batch:set_options(steel.default_options())
  local d, o2 = steel.default_options(), batch:options()
  for name, value in pairs(d) do equal(o2[name], value, "reset " .. name) end
end)

test("options change the solve: iterations, tolerance, warm start", function()
  local batch <close> = steel.batch()
  local rows = one_contact()
  rows.initial_impulse = { 2.0 }
  batch:upload_rows(rows)
  batch:set_options { iterations = 5, record_residual_history = true }
  local s = batch:solve():stats()[1]
  equal(s.sweeps, 5, "tolerance 0 runs every sweep")
  equal(s.first_residual, 0.0, "warm started at the answer")
  equal(#batch:residual_history(0), 5, "history length")
  batch:set_options { warm_start = false, tolerance = 1e-12 }
  s = batch:solve():stats()[1]
  equal(s.first_residual, 1.0, "cold start: the first sweep fixes an error of 1")
  equal(s.converged, true, "converged")
  equal(s.sweeps, 2, "stops at the tolerance")
end)

test("handle, tostring, close, is_closed, and __close", function()
  local batch = steel.batch()
  local handle = batch:handle()
  equal(math.type(handle), "integer", "handle type")
  assert(handle ~= 0, "a live batch has a nonzero handle")
  assert(tostring(batch):match("^steel%.batch %(handle 0x%x+%)$"), tostring(batch))
  equal(batch:is_closed(), false, "open")
  batch:close()
  equal(batch:is_closed(), true, "closed")
  equal(batch:handle(), 0, "closed handle")
  equal(tostring(batch), "steel.batch (closed)", "closed tostring")
  batch:close() -- idempotent
  getmetatable(batch).__gc(batch)
  getmetatable(batch).__close(batch, nil)
  local kept
  do
    local scoped <close> = steel.batch()
    kept = scoped
    equal(kept:is_closed(), false, "open inside the block")
  end
  equal(kept:is_closed(), true, "__close at the end of the block")
  local ok = pcall(function()
    local scoped <close> = steel.batch()
    kept = scoped
    error("half-way")
  end)
  equal(ok, false, "the error propagates")
  equal(kept:is_closed(), true, "__close on error")
end)

test("a closed batch is an error to use, for every method", function()
  local batch = steel.batch()
  batch:close()
  local calls = {
    function() batch:desc() end, function() batch:upload_rows(one_contact()) end,
    function() batch:set_options {} end, function() batch:options() end, function() batch:solve() end,
    function() batch:impulses() end, function() batch:velocities() end, function() batch:stats() end,
    function() batch:residual_history(0) end, function() batch:upload_scene {} end,
    function() batch:contact_impulses() end, function() batch:joint_velocities() end,
    function() batch:limit_impulses() end, function() batch:drive_impulses() end,
    function() batch:body_velocities() end, function() batch:body_poses() end,
    function() batch:integrated_positions() end, function() batch:constraint_impulses() end,
    function() batch:save(os.tmpname()) end, function() batch:save_string() end,
    function() batch:set_capture(nil) end,
  }
  for i, call in ipairs(calls) do raises({ "attempt to use a closed steel.batch" }, call) end
end)

test("methods check their self argument", function()
  local batch <close> = steel.batch()
  raises({ "steel.batch expected" }, batch.solve, {})
  raises({ "steel.batch expected" }, batch.solve, steel.buffer(1))
end)

-------------------------------------------------------------------------------- buffers

test("buffers: construction, indexing, length, fill, totable, type", function()
  local b = steel.buffer(3)
  equal(#b, 3, "length")
  equal(b:type(), "float64", "default type")
  equal(b[1], 0.0, "zero-filled")
  b[2] = 2.5
  equal(b[2], 2.5, "store")
  equal(b[0], nil, "below the start")
  equal(b[4], nil, "past the end")
  equal(b.nothing, nil, "unknown method")
  local seen = 0
  for i, v in ipairs(b) do seen = seen + 1; equal(v, b[i], "ipairs value") end
  equal(seen, 3, "ipairs visits every element")
  equal(b:fill(1.5), b, "fill returns the buffer")
  same(b:totable(), { 1.5, 1.5, 1.5 }, "filled")
  local i32 = steel.buffer({ -1, 2, 3 }, "int32")
  equal(i32:type(), "int32", "int32 type")
  equal(math.type(i32[1]), "integer", "int32 elements are integers")
  same(i32:totable(), { -1, 2, 3 }, "int32 values")
  local u32 = steel.buffer({ 0, 4294967295 }, "uint32")
  equal(u32[2], 4294967295, "uint32 max")
  u32[1] = 7.0
  equal(u32[1], 7, "a whole float stores in an integer buffer")
  assert(tostring(u32):match("^steel%.buffer%(2, uint32%)"), tostring(u32))
  equal(#steel.buffer(0), 0, "empty buffer")
  equal(#steel.buffer({}), 0, "empty table")
end)

test("buffers: every misuse is an error that says what", function()
  local b = steel.buffer(2)
  raises({ "index 3 is outside [1, 2]" }, function() b[3] = 1 end)
  raises({ "index 'x' is outside" }, function() b.x = 1 end)
  raises({ "element 1 must be a number, got string" }, function() b[1] = "a" end)
  raises({ "element 1 must be a number, got string" }, function() b[1] = "16" end)
  raises({ "element 1 must be a number, got string" }, function() steel.buffer(1, "int32")[1] = "7" end)
  raises({ "invalid option 'float16'" }, steel.buffer, 2, "float16")
  raises({ "the element count must be >= 0" }, steel.buffer, -1)
  raises({ "element 2 must be a number" }, steel.buffer, { 1, {} })
  raises({ "element 1 = -1 is out of the uint32 range" }, steel.buffer, { -1 }, "uint32")
  raises({ "element 1 = 2147483648 is out of the int32 range" }, steel.buffer, { 2147483648 }, "int32")
  raises({ "element 1 must be an integer for a int32 buffer, got 1.5" }, steel.buffer, { 1.5 }, "int32")
  raises({ "the fill value must be a number" }, b.fill, b, "x")
end)

-------------------------------------------------------------------------------- Steel's errors

-- Each failed Steel status is a Lua error: Steel's message, then the status in brackets.
test("create: Steel's messages for a bad desc", function()
  raises({ "steel_batch_create: world_count is 0", "[invalid argument]" }, steel.batch, { world_count = 0 })
  raises({ "steel_batch_create: thread_count = 300 is above the limit", "[invalid argument]" }, steel.batch,
         { thread_count = 300 })
  if not steel.build_features().cuda then
    raises({ "steel_batch_create: this build of Steel has no CUDA backend", "[unsupported]" }, steel.batch,
           { backend = "cuda" })
  end
end)

test("create: the binding's own checks name the field", function()
  raises({ "steel.batch: precision = 'float16' is not one of 'float32', 'float64'" }, steel.batch,
         { precision = "float16" })
  raises({ "steel.batch: backend = 1 is not one of 'cpu', 'cuda'" }, steel.batch, { backend = 1 })
  raises({ "steel.batch: world_count must be an integer in [0, 4294967295], got -1" }, steel.batch,
         { world_count = -1 })
  raises({ "steel.batch: thread_count must be an integer", "got 1.5" }, steel.batch, { thread_count = 1.5 })
  raises({ "steel.batch: unknown field 'worlds'" }, steel.batch, { worlds = 2 })
  raises({ "table expected, got number" }, steel.batch, 2)
end)

test("upload: Steel's messages name world, row and field", function()
  local batch <close> = steel.batch { world_count = 1 }
  local rows = one_contact()
  rows.block_offset = { 1, 0 }
  raises({ "steel_batch_upload_rows: world 0, row 0 (batch row 0): block 0 covers DOFs [1, 2) but the world has 1",
           "[invalid argument]" }, batch.upload_rows, batch, rows)
  rows = one_contact()
  rows.response = { -0.5 }
  raises({ "J.Y + cfm = -0.5 must be positive and finite" }, batch.upload_rows, batch, rows)
  rows = one_contact()
  rows.unconstrained_velocity = { 0 / 0 }
  raises({ "steel_batch_upload_rows:", "is NaN" }, batch.upload_rows, batch, rows)
  rows = one_contact()
  rows.kind = { 9 }
  raises({ "kind = 9 is not a STEEL_ROW_* value" }, batch.upload_rows, batch, rows)
  rows = one_contact()
  rows.kind = { "friction_box" }
  rows.normal_row, rows.friction = { 0 }, { 0.5 }
  raises({ "normal_row = 0 is a row of kind 3, not STEEL_ROW_CONTACT_NORMAL" }, batch.upload_rows, batch, rows)
  rows = one_contact()
  rows.kind = { "bounded" }
  rows.lower, rows.upper = { 1 }, { -1 }
  raises({ "lower = 1 > upper = -1" }, batch.upload_rows, batch, rows)
  rows = one_contact()
  rows.kind = { "bounded" }
  raises({ "lower is NULL" }, batch.upload_rows, batch, rows) -- absent arrays reach Steel as NULL
  rows = one_contact()
  rows.bias = nil
  raises({ "bias is NULL" }, batch.upload_rows, batch, rows)
  rows = one_contact()
  rows.value_count = 2
  rows.jacobian, rows.response = { 1, 0 }, { 0.5, 0 }
  raises({ "value_count = 2 but the rows' blocks hold 1 values" }, batch.upload_rows, batch, rows)
  rows = one_contact()
  rows.world_dof_counts, rows.world_row_counts = { 1, 0 }, { 1, 0 }
  raises({ "world_count is 2 but the batch has 1 worlds" }, batch.upload_rows, batch, rows)
end)

test("upload: lengths are checked before Steel reads anything", function()
  local batch <close> = steel.batch()
  local cases = {
    { "bias", { 0, 0 }, "steel: rows.bias has 2 values but needs 1 (total_rows, the sum of world_row_counts)" },
    { "block_offset", { 0 }, "steel: rows.block_offset has 1 values but needs 2 (2 * total_rows)" },
    { "unconstrained_velocity", {}, "rows.unconstrained_velocity has 0 values but needs 1 (total_dofs" },
    { "response", { 0.5, 1 }, "steel: rows.response has 2 values but needs 1 (value_count)" },
    { "world_row_counts", { 1, 1 }, "steel: rows.world_row_counts has 2 values but needs 1 (world_count)" },
    { "initial_impulse", { 1, 2, 3 }, "rows.initial_impulse has 3 values but needs 1" },
    { "friction", steel.buffer(4), "rows.friction has 4 values but needs 1" },
  }
  for _, c in ipairs(cases) do
    local rows = one_contact()
    rows[c[1]] = c[2]
    raises({ c[3] }, batch.upload_rows, batch, rows)
  end
end)

test("upload: the binding's own checks name the field and entry", function()
  local batch <close> = steel.batch()
  local function with(field, value)
    local rows = one_contact()
    rows[field] = value
    return rows
  end
  raises({ "steel: rows.kind[1] = 'contact' is not one of 'bilateral', 'bounded', 'contact_normal', "
           .. "'friction_box', 'friction_cone'" }, batch.upload_rows, batch, with("kind", { "contact" }))
  raises({ "steel: rows.kind[1] must be an integer or a name, got true" }, batch.upload_rows, batch,
         with("kind", { true }))
  raises({ "steel: rows.block_offset[1] = -1 is out of the uint32 range" }, batch.upload_rows, batch,
         with("block_offset", { -1, 0 }))
  raises({ "steel: rows.block_length[2] must be an integer, got 0.5" }, batch.upload_rows, batch,
         with("block_length", { 1, 0.5 }))
  raises({ "steel: rows.normal_row[1] = 4294967296 is out of the int32 range" }, batch.upload_rows, batch,
         with("normal_row", { 1 << 32 }))
  raises({ "steel: rows.jacobian[1] must be a number, got string" }, batch.upload_rows, batch,
         with("jacobian", { "1" }))
  raises({ "steel: rows.bias must be a table or a steel.buffer, got number" }, batch.upload_rows, batch,
         with("bias", 0))
  raises({ "steel: rows.kind is a float64 buffer; it must be a int32 buffer or a table" }, batch.upload_rows,
         batch, with("kind", steel.buffer { 2 }))
  raises({ "steel: rows.world_dof_counts is a int32 buffer; it must be a uint32 buffer" }, batch.upload_rows,
         batch, with("world_dof_counts", steel.buffer({ 1 }, "int32")))
  raises({ "steel: unknown rows field 'jacobians' (not a field of steel_rows_desc)" }, batch.upload_rows, batch,
         with("jacobians", { 1 }))
  raises({ "steel: rows.world_count must be an integer" }, batch.upload_rows, batch, with("world_count", "1"))
  raises({ "steel: rows.value_count must be an integer >= 0, got -1" }, batch.upload_rows, batch,
         with("value_count", -1))
  raises({ "table expected, got no value" }, batch.upload_rows, batch)
end)

test("a failed upload changes nothing: the last results stay readable", function()
  local batch <close> = steel.batch()
  batch:upload_rows(one_contact())
  batch:solve()
  local bad = one_contact()
  bad.response = { -1 }
  raises({ "must be positive and finite" }, batch.upload_rows, batch, bad)
  equal(batch:impulses()[1], 2.0, "results of the last solve")
  bad.kind = { "nope" }
  raises({ "is not one of" }, batch.upload_rows, batch, bad)
  equal(batch:impulses()[1], 2.0, "still there")
end)

test("set_options: Steel's messages", function()
  local batch <close> = steel.batch()
  raises({ "steel_batch_set_options: iterations = 0; at least one sweep is needed", "[invalid argument]" },
         batch.set_options, batch, { iterations = 0 })
  raises({ "steel_batch_set_options: cfm = -1 must be finite and >= 0" }, batch.set_options, batch, { cfm = -1 })
  raises({ "steel_batch_set_options: tolerance = inf must be finite and >= 0" }, batch.set_options, batch,
         { tolerance = math.huge })
  raises({ "steel_batch_set_options: contact_regularization = -0.5 must be finite and >= 0" }, batch.set_options,
         batch, { contact_regularization = -0.5 })
  equal(batch:options().iterations, 50, "a refused set changes nothing")
end)

test("set_options: unknown, refused and badly typed options name the option", function()
  local batch <close> = steel.batch()
  raises({ "steel: unknown option 'iteration'" }, batch.set_options, batch, { iteration = 3 })
  raises({ "steel: option names are strings, got 1" }, batch.set_options, batch, { 5 })
  raises({ "solve_mode = STEEL_SOLVE_COLORED needs articulated_contact_response = STEEL_RESPONSE_PROPAGATION" },
         batch.set_options, batch, { solve_mode = "colored" })
  raises({ "steel: option 'articulated_contact_response' = 'delayed' is not one of 'immediate', 'propagation'" },
         batch.set_options, batch, { articulated_contact_response = "delayed" })
  raises({ "steel: 'drive_mode' is not a solve option; it is a field of the scene: batch:upload_scene{ drive_mode" },
         batch.set_options, batch, { drive_mode = "rows" })
  raises({ "steel: 'friction_model' is not a solve option" }, batch.set_options, batch, { friction_model = "cone" })
  raises({ "steel: 'dt' is not a solve option" }, batch.set_options, batch, { dt = 0.01 })
  raises({ "steel: option 'path' = 'fast' is not one of 'auto', 'general', 'dense'" }, batch.set_options, batch,
         { path = "fast" })
  raises({ "steel: option 'path' = 2 is not one of" }, batch.set_options, batch, { path = 2 })
  raises({ "steel: option 'nesterov_momentum' must be a boolean (or 0/1), got 2" }, batch.set_options, batch,
         { nesterov_momentum = 2 })
  raises({ "steel: option 'warm_start' must be a boolean (or 0/1), got 'yes'" }, batch.set_options, batch,
         { warm_start = "yes" })
  raises({ "steel: option 'iterations' must be an integer in [0, 4294967295], got 2.5" }, batch.set_options, batch,
         { iterations = 2.5 })
  raises({ "steel: option 'iterations' must be an integer in [0, 4294967295], got -3" }, batch.set_options, batch,
         { iterations = -3 })
  raises({ "steel: option 'cfm' must be a number, got 'big'" }, batch.set_options, batch, { cfm = "big" })
  raises({ "table expected, got no value" }, batch.set_options, batch)
  equal(batch:options().path, "auto", "a refused set changes nothing")
end)

test("solve and read: Steel's no-data and buffer-size messages", function()
  local batch <close> = steel.batch { world_count = 1 }
  raises({ "steel_batch_solve: no rows have been uploaded", "[no data]" }, batch.solve, batch)
  batch:upload_rows(one_contact())
  raises({ "steel_batch_read_impulses: the batch has not been solved since its last upload", "[no data]" },
         batch.impulses, batch)
  raises({ "steel_batch_read_velocities: the batch has not been solved" }, batch.velocities, batch)
  raises({ "steel_batch_read_world_stats: the batch has not been solved" }, batch.stats, batch)
  raises({ "steel_batch_read_residual_history: the batch has not been solved" }, batch.residual_history, batch, 0)
  batch:solve()
  raises({ "steel_batch_read_residual_history: the last solve ran with record_residual_history = 0", "[no data]" },
         batch.residual_history, batch, 0)
  raises({ "steel_batch_read_residual_history: world 1 is out of range; the batch has 1 worlds",
           "[invalid argument]" }, batch.residual_history, batch, 1)
  raises({ "a world number (0-based)" }, batch.residual_history, batch, -1)
  raises({ "steel_batch_read_impulses: capacity 0 is smaller than the 1 values to write", "[buffer too small]" },
         batch.impulses, batch, steel.buffer(0))
  raises({ "steel_batch_read_velocities: capacity 0 is smaller than the 1 values" }, batch.velocities, batch,
         steel.buffer(0))
  batch:set_options { record_residual_history = true, iterations = 4 }
  batch:solve()
  raises({ "steel_batch_read_residual_history: capacity 3 is smaller than the 4 sweeps of world 0",
           "[buffer too small]" }, batch.residual_history, batch, 0, steel.buffer(3))
  raises({ "float64 steel.buffer or nil expected" }, batch.impulses, batch, steel.buffer(1, "int32"))
  raises({ "float64 steel.buffer or nil expected" }, batch.impulses, batch, {})
end)

test("non-finite worlds are data, not errors", function()
  local batch <close> = steel.batch { world_count = 2, precision = "float32" }
  batch:upload_rows { world_dof_counts = { 1, 1 }, world_row_counts = { 1, 1 },
                      unconstrained_velocity = { -1e30, -1 }, block_offset = { 0, 0, 0, 0 },
                      block_length = { 1, 0, 1, 0 }, jacobian = { 1e19, 1 }, response = { 1e-19, 0.5 },
                      bias = { 0, 0 }, kind = { "bilateral", "contact_normal" } }
  local stats = batch:solve():stats()
  equal(stats[1].nonfinite, true, "world 0 flagged")
  equal(stats[1].converged, false, "never converged")
  equal(stats[2].nonfinite, false, "world 1 untouched")
  local impulses = batch:impulses()
  equal(impulses[1], 0.0, "reset to zero")
  equal(impulses[2], 2.0, "world 1 solved")
end)

-------------------------------------------------------------------------------- scene mode

local g, dt = 9.81, 1 / 60
local scene_readers = { "contact_impulses", "joint_velocities", "limit_impulses", "drive_impulses",
                        "body_velocities", "body_poses", "integrated_positions" }
local scene_buffer_types = { world_body_count = "uint32", world_contact_count = "uint32",
                             world_connect_count = "uint32", world_mimic_count = "uint32", joint_type = "int32",
                             joint_parent = "int32", body_flags = "int32", contact_body_a = "int32",
                             contact_body_b = "int32", connect_body_a = "int32", connect_body_b = "int32",
                             mimic_joint_a = "int32", mimic_joint_b = "int32" }
local joint_names = { [0] = "fixed", "revolute", "prismatic", "ball", "free", "none" }
local flag_names = { [0] = "dynamic", "static", "kinematic" }

local function scene_case(name)
  for _, case in ipairs(reference.scenes) do
    if case.name == name then return case end
  end
  error("no scene case " .. name)
end

-- The scene of a case with joint_type and body_flags by name (the reference has steel.h numbers).
local function scene_with_names(case)
  local scene = copy(case.scene)
  for i, t in ipairs(scene.joint_type) do scene.joint_type[i] = joint_names[t] end
  for i, f in ipairs(scene.body_flags or {}) do scene.body_flags[i] = flag_names[f] end
  return scene
end

-- Every array of a scene as a typed steel.buffer (numbers stay numbers).
local function scene_as_buffers(scene)
  local out = {}
  for field, value in pairs(scene) do
    out[field] = type(value) == "table" and steel.buffer(value, scene_buffer_types[field] or "float64") or value
  end
  return out
end

-- Uploads `scene` to a batch made like the case's, solves, and reads every result (into tables,
-- or into buffers sized exactly to the C results).
local function solve_scene(case, scene, use_buffers)
  local batch <close> = steel.batch(case.desc)
  local options = steel.default_options()
  for name, value in pairs(case.options) do options[name] = value end
  batch:set_options(options)
  equal(batch:upload_scene(scene), nil, "upload_scene returns nothing")
  batch:solve()
  local result = {}
  for _, reader in ipairs { "impulses", "velocities", table.unpack(scene_readers) } do
    local expected = case.results[reader]
    if use_buffers then
      local buffer = steel.buffer(#expected)
      local returned, count = batch[reader](batch, buffer)
      equal(returned, buffer, reader .. "(buffer) returns the buffer")
      equal(count, #expected, reader .. " count")
      result[reader] = buffer:totable()
    else
      local values, count = batch[reader](batch)
      equal(count, #expected, reader .. " count")
      result[reader] = values
    end
  end
  result.stats = batch:stats()
  return result
end

local function check_scene_case(case, result, how)
  local where = case.name .. " (" .. how .. ")"
  for reader, expected in pairs(case.results) do same(result[reader], expected, where .. ": " .. reader) end
  for w, expected in ipairs(case.stats) do
    for field, value in pairs(expected) do
      equal(result.stats[w][field], value, string.format("%s: world %d %s", where, w - 1, field))
    end
  end
end

for _, case in ipairs(reference.scenes) do
  test("the C scene results, from tables with names: " .. case.name, function()
    check_scene_case(case, solve_scene(case, scene_with_names(case), false), "tables, names")
  end)
  test("the C scene results, from tables with numbers: " .. case.name, function()
    check_scene_case(case, solve_scene(case, copy(case.scene), false), "tables, numbers")
  end)
  test("the C scene results, from buffers: " .. case.name, function()
    check_scene_case(case, solve_scene(case, scene_as_buffers(case.scene), true), "buffers")
  end)
end

test("scene: a box resting on the ground carries m g dt and stays put", function()
  local case = scene_case("box_on_ground")
  local r = solve_scene(case, scene_with_names(case), false)
  local m, total = case.scene.body_mass[1], 0
  equal(#r.contact_impulses, 6 * 4, "6 values per contact")
  for c = 0, 3 do total = total + r.contact_impulses[6 * c + 1] end
  checks.near(total, m * g * dt, 1e-9 * m * g * dt, "total normal impulse")
  local net_z = 0
  for c = 0, 3 do net_z = net_z + r.contact_impulses[6 * c + 6] end
  checks.near(net_z, m * g * dt, 1e-9, "world z of the impulses on the box")
  for i, v in ipairs(r.body_velocities) do checks.near(v, 0, 1e-9, "body velocity " .. i) end
  checks.near(r.body_poses[3], 0.5, 1e-12, "height after the step")
  same(r.integrated_positions, r.body_poses, "a FREE joint to the world: q is the body pose")
end)

test("scene: the propagation response and colored sweeps reach the same closed forms", function()
  local base = scene_case("pendulum_limit_drive")
  for _, mode in ipairs { { "propagation", "serial" }, { "propagation", "colored" } } do
    local case = { desc = base.desc, options = copy(base.options), results = base.results }
    case.options.articulated_contact_response, case.options.solve_mode = mode[1], mode[2]
    local r = solve_scene(case, scene_with_names(base), false)
    local where = mode[1] .. ", " .. mode[2] .. ": "
    checks.near(r.joint_velocities[1], -dt * g / 1.001, 1e-12, where .. "pendulum qd'")
    checks.near(r.limit_impulses[2], dt * g * math.sin(0.5), 1e-12, where .. "lower-limit impulse")
    checks.near(r.joint_velocities[2], 0, 1e-12, where .. "stays on the limit")
  end
end)

test("scene: a pendulum step, a joint limit and a drive row match their closed forms", function()
  local case = scene_case("pendulum_limit_drive")
  local r = solve_scene(case, scene_with_names(case), false)
  -- World 0: released from horizontal, qd' = -dt g / (m L^2 + I) with m = L = 1, I = 1e-3.
  local qd = -dt * g / 1.001
  checks.near(r.joint_velocities[1], qd, 1e-12, "pendulum qd'")
  checks.near(r.integrated_positions[1], math.pi / 2 + dt * qd, 1e-12, "pendulum q'")
  checks.near(r.body_velocities[3], qd, 1e-12, "com velocity (the com is 1 m out along -x: v_z = qd)")
  -- World 1: at rest on its lower limit; the limit carries gravity's torque for one step.
  checks.near(r.limit_impulses[2], dt * g * math.sin(0.5), 1e-12, "lower-limit impulse")
  checks.near(r.joint_velocities[2], 0, 1e-12, "stays on the limit")
  -- World 2: the damper drive row: lambda = dt kd (1 - qd'), qd' = lambda / m.
  local kd, m = 10, 2
  local lambda = dt * kd / (1 + dt * kd / m)
  checks.near(r.drive_impulses[3], lambda, 1e-12, "drive impulse")
  checks.near(r.joint_velocities[3], lambda / m, 1e-12, "slider velocity")
  equal(r.drive_impulses[1], 0.0, "no drive on the pendulum")
  equal(r.limit_impulses[1], 0.0, "no limit on the free pendulum")
end)

test("scene: stepping with integrated_positions and joint_velocities as the next state", function()
  local case = scene_case("pendulum_limit_drive")
  local scene = scene_with_names(case)
  local batch <close> = steel.batch(case.desc)
  local q, qd = steel.buffer(3), steel.buffer(3)
  local previous_q = scene.joint_position[1]
  for step = 1, 3 do
    batch:upload_scene(scene)
    batch:solve()
    batch:integrated_positions(q)
    batch:joint_velocities(qd)
    checks.near(q[1], previous_q + dt * qd[1], 1e-15, "symplectic Euler, step " .. step)
    previous_q = q[1]
    scene.joint_position, scene.joint_velocity = q:totable(), qd:totable()
  end
  assert(q[1] < math.pi / 2 - 0.01, "the pendulum falls")
end)

test("scene: a kinematic platform drags a standalone box by mu g dt", function()
  local case = scene_case("standalone_connect_mimic")
  local r = solve_scene(case, scene_with_names(case), false)
  local mu = case.scene.contact_friction[1]
  checks.near(r.body_velocities[1], mu * g * dt, 1e-9, "box dragged along +x")
  equal(r.body_velocities[7], 2.0, "the platform moves at its own velocity")
  checks.near(r.body_poses[8], 2.0 * dt, 1e-15, "and the platform moved")
  equal(#r.integrated_positions, 3, "standalone bodies have no position coordinates")
  equal(#r.joint_velocities, 6 + 3, "6 DOFs of the dynamic box, none for the platform, 3 pendulums")
end)

-- A one-box scene to break in the error tests: a 1 kg free box resting on one contact.
local function one_box()
  return { gravity = { 0, 0, -9.81 }, world_body_count = { 1 }, world_contact_count = { 1 },
           body_mass = { 1 }, body_com = { 0, 0, 0 }, body_inertia = { 1, 1, 1, 0, 0, 0 }, joint_type = { "free" },
           joint_parent = { -1 }, joint_parent_frame = { 0, 0, 0, 1, 0, 0, 0 },
           joint_child_frame = { 0, 0, 0, 1, 0, 0, 0 }, joint_position = { 0, 0, 0.5, 1, 0, 0, 0 },
           joint_velocity = { 0, 0, 0, 0, 0, 0 }, contact_body_a = { 0 }, contact_body_b = { -1 },
           contact_point = { 0, 0, 0 }, contact_normal = { 0, 0, 1 }, contact_distance = { 0 },
           contact_friction = { 0.5 } }
end

test("scene: defaults, world_count, and the step parameters by name or number", function()
  local batch <close> = steel.batch()
  batch:upload_scene(one_box())
  batch:solve()
  checks.near(batch:contact_impulses()[1], 9.81 / 60, 1e-12, "dt defaults to 1/60")
  local scene = one_box()
  scene.world_count, scene.dt, scene.friction_model, scene.drive_mode = 1, 0.01, "cone", "rows"
  scene.baumgarte, scene.restitution_threshold = 0.5, 1.0
  batch:upload_scene(scene)
  checks.near(batch:solve():contact_impulses()[1], 9.81 * 0.01, 1e-12, "dt = 0.01")
  scene.friction_model, scene.drive_mode = 1, 0 -- steel.h's numbers
  batch:upload_scene(scene)
  scene = one_box()
  scene.world_body_count = nil -- no bodies counted: the body arrays are too long
  raises({ "steel: scene.body_mass has 1 values but needs 0 (total bodies" }, batch.upload_scene, batch, scene)
  -- world_count falls back to the batch's; Steel then wants the body counts.
  raises({ "steel_batch_upload_scene: world_body_count is NULL" }, batch.upload_scene, batch,
         { gravity = { 0, 0, -9.81 } })
end)

test("scene: lengths are checked against the counts before Steel reads anything", function()
  local batch <close> = steel.batch()
  local cases = {
    { "body_com", { 0, 0 }, "steel: scene.body_com has 2 values but needs 3 (3 * total bodies, the sum of "
      .. "world_body_count)" },
    { "body_mass", { 1, 1 }, "steel: scene.body_mass has 2 values but needs 1 (total bodies" },
    { "joint_type", {}, "steel: scene.joint_type has 0 values but needs 1" },
    { "joint_parent_frame", steel.buffer(6), "scene.joint_parent_frame has 6 values but needs 7 (7 * total bodies" },
    { "joint_velocity", { 0, 0, 0, 0, 0 }, "steel: scene.joint_velocity has 5 values but needs 6 (total DOFs, "
      .. "from joint_type and body_flags)" },
    { "drive_effort_limit", { 1 }, "scene.drive_effort_limit has 1 values but needs 6 (total DOFs" },
    { "joint_position", { 0, 0, 0.5 }, "steel: scene.joint_position has 3 values but needs 7 (total position "
      .. "coordinates, from joint_type)" },
    { "contact_point", { 0, 0 }, "steel: scene.contact_point has 2 values but needs 3 (3 * total contacts, the "
      .. "sum of world_contact_count)" },
    { "contact_restitution", { 0, 0 }, "scene.contact_restitution has 2 values but needs 1" },
    { "gravity", { 0, -9.81 }, "steel: scene.gravity has 2 values but needs 3 (3 * world_count)" },
    { "world_contact_count", { 1, 0 }, "steel: scene.world_contact_count has 2 values but needs 1 (world_count)" },
    { "body_pose", { 0, 0, 0 }, "scene.body_pose has 3 values but needs 7" },
    { "body_flags", { "dynamic", "static" }, "scene.body_flags has 2 values but needs 1" },
    { "connect_body_a", { 0 }, "steel: scene.connect_body_a has 1 values but needs 0 (total connect constraints" },
    { "mimic_ratio", { 1 }, "steel: scene.mimic_ratio has 1 values but needs 0 (total mimic constraints" },
  }
  for _, c in ipairs(cases) do
    local scene = one_box()
    scene[c[1]] = c[2]
    raises({ c[3] }, batch.upload_scene, batch, scene)
  end
  -- A standalone body's DOFs follow its flags: a kinematic one has none.
  local scene = one_box()
  scene.joint_type, scene.body_flags, scene.joint_position = { "none" }, { "kinematic" }, {}
  scene.body_pose, scene.body_velocity = { 0, 0, 0.5, 1, 0, 0, 0 }, { 0, 0, 0, 0, 0, 0 }
  raises({ "scene.joint_velocity has 6 values but needs 0 (total DOFs" }, batch.upload_scene, batch, scene)
  scene.joint_velocity = nil
  batch:upload_scene(scene) -- accepted as it is
  scene.body_flags, scene.joint_velocity = { "dynamic" }, {}
  raises({ "scene.joint_velocity has 0 values but needs 6" }, batch.upload_scene, batch, scene)
end)

test("scene: the binding's own checks name the field and entry", function()
  local batch <close> = steel.batch()
  local function with(field, value)
    local scene = one_box()
    scene[field] = value
    return scene
  end
  raises({ "steel: scene.joint_type[1] = 'hinge' is not one of 'fixed', 'revolute', 'prismatic', 'ball', 'free', "
           .. "'none'" }, batch.upload_scene, batch, with("joint_type", { "hinge" }))
  raises({ "steel: scene.joint_type[1] = 9 is not a STEEL_JOINT_* value ('fixed'" }, batch.upload_scene, batch,
         with("joint_type", { 9 }))
  raises({ "steel: scene.body_flags[1] = 'frozen' is not one of 'dynamic', 'static', 'kinematic'" },
         batch.upload_scene, batch, with("body_flags", { "frozen" }))
  raises({ "steel: scene.body_flags[1] = -1 is not a STEEL_BODY_* value" }, batch.upload_scene, batch,
         with("body_flags", { -1 }))
  raises({ "steel: scene.friction_model = 'pyramid' is not one of 'box', 'cone'" }, batch.upload_scene, batch,
         with("friction_model", "pyramid"))
  raises({ "steel: scene.drive_mode = 'soft' is not one of 'augmented', 'rows'" }, batch.upload_scene, batch,
         with("drive_mode", "soft"))
  raises({ "steel: scene.drive_mode must be one of 'augmented', 'rows' (or a steel.h number), got true" },
         batch.upload_scene, batch, with("drive_mode", true))
  raises({ "steel: scene.dt must be a number, got '1/60'" }, batch.upload_scene, batch, with("dt", "1/60"))
  raises({ "steel: scene.world_count must be an integer in [0, 4294967295], got -1" }, batch.upload_scene, batch,
         with("world_count", -1))
  raises({ "steel: unknown scene field 'bodies' (not a field of steel_scene_desc)" }, batch.upload_scene, batch,
         with("bodies", {}))
  raises({ "steel: unknown scene field 1" }, batch.upload_scene, batch, { 1 })
  raises({ "steel: scene.body_mass[1] must be a number, got string" }, batch.upload_scene, batch,
         with("body_mass", { "1" }))
  raises({ "steel: scene.joint_parent[1] must be an integer, got 0.5" }, batch.upload_scene, batch,
         with("joint_parent", { 0.5 }))
  raises({ "steel: scene.world_body_count[1] = -1 is out of the uint32 range" }, batch.upload_scene, batch,
         with("world_body_count", { -1 }))
  raises({ "steel: scene.joint_type is a float64 buffer; it must be a int32 buffer or a table" },
         batch.upload_scene, batch, with("joint_type", steel.buffer { 4 }))
  raises({ "steel: scene.contact_point must be a table or a steel.buffer, got number" }, batch.upload_scene, batch,
         with("contact_point", 0))
  raises({ "steel: scene.joint_type is missing but there are 1 bodies" }, batch.upload_scene, batch,
         with("joint_type", nil))
  raises({ "table expected, got no value" }, batch.upload_scene, batch)
end)

test("scene: Steel's own messages name world, item and field", function()
  local batch <close> = steel.batch()
  local function with(field, value)
    local scene = one_box()
    scene[field] = value
    return scene
  end
  local prefix = "steel_batch_upload_scene: "
  raises({ prefix .. "world 0, body 0: body_mass = -1 must be finite and > 0", "[invalid argument]" },
         batch.upload_scene, batch, with("body_mass", { -1 }))
  raises({ prefix .. "world 0, body 0: body_inertia is not positive definite" }, batch.upload_scene, batch,
         with("body_inertia", { -1, 1, 1, 0, 0, 0 }))
  raises({ prefix .. "world 0, contact 0: contact_body_a = 5" }, batch.upload_scene, batch,
         with("contact_body_a", { 5 }))
  raises({ "contact_normal has length 2" }, batch.upload_scene, batch, with("contact_normal", { 0, 0, 2 }))
  raises({ prefix .. "dt = 0 must be finite and > 0" }, batch.upload_scene, batch, with("dt", 0))
  raises({ prefix .. "friction_model = 7 is not a STEEL_FRICTION_MODEL_* value" }, batch.upload_scene, batch,
         with("friction_model", 7))
  raises({ prefix .. "world 0, body 0: body_flags = 1 needs joint_type STEEL_JOINT_NONE" }, batch.upload_scene,
         batch, with("body_flags", { "static" }))
  raises({ prefix .. "body_inertia is NULL" }, batch.upload_scene, batch, with("body_inertia", nil))
  raises({ prefix .. "world_count is 2 but the batch has 1 worlds" }, batch.upload_scene, batch,
         (function()
           local scene = one_box()
           scene.world_count, scene.world_body_count, scene.gravity = 2, { 1, 0 }, { 0, 0, -9.81, 0, 0, -9.81 }
           scene.world_contact_count = { 1, 0 }
           return scene
         end)())
end)

test("scene readers: Steel's no-data and buffer-size messages; a failed upload changes nothing", function()
  local batch <close> = steel.batch()
  batch:upload_scene(one_box())
  for _, reader in ipairs(scene_readers) do
    raises({ "steel_batch_read_" .. reader .. ": the batch has not been solved since its last upload", "[no data]" },
           batch[reader], batch)
  end
  batch:solve()
  local before = batch:contact_impulses()
  raises({ "steel_batch_read_contact_impulses: capacity 5 is smaller than the 6 values to write",
           "[buffer too small]" }, batch.contact_impulses, batch, steel.buffer(5))
  raises({ "steel_batch_read_body_poses: capacity 0 is smaller than the 7 values" }, batch.body_poses, batch,
         steel.buffer(0))
  raises({ "float64 steel.buffer or nil expected" }, batch.joint_velocities, batch, steel.buffer(6, "int32"))
  local bad = one_box()
  bad.body_mass = { 0 }
  raises({ "body_mass = 0 must be finite and > 0" }, batch.upload_scene, batch, bad)
  bad.body_com = { 0 }
  raises({ "scene.body_com has 1 values" }, batch.upload_scene, batch, bad)
  same(batch:contact_impulses(), before, "the last scene results stay readable")
  batch:upload_rows(one_contact())
  batch:solve()
  for _, reader in ipairs(scene_readers) do
    raises({ "steel_batch_read_" .. reader .. ": the batch's rows were uploaded as rows, not as a scene",
             "[no data]" }, batch[reader], batch)
  end
end)

test("constraint_impulses: a connect holding a 3 kg bob carries m g dt", function()
  local batch <close> = steel.batch()
  local dt, g = 1 / 60, 9.81
  batch:upload_scene {
    dt = dt, gravity = { 0, 0, -g }, world_body_count = { 1 }, world_connect_count = { 1 },
    body_mass = { 3 }, body_com = { 0, 0, 0 }, body_inertia = { 0.02, 0.02, 0.02, 0, 0, 0 },
    joint_type = { "free" }, joint_parent = { -1 }, joint_parent_frame = { 0, 0, 0, 1, 0, 0, 0 },
    joint_child_frame = { 0, 0, 0, 1, 0, 0, 0 }, joint_position = { 0, 0, -1, 1, 0, 0, 0 },
    joint_velocity = { 0, 0, 0, 0, 0, 0 },
    connect_body_a = { 0 }, connect_body_b = { -1 }, connect_point_a = { 0, 0, 0 }, connect_point_b = { 0, 0, -1 },
  }
  batch:set_options { iterations = 100 }
  batch:solve()
  local impulses, count = batch:constraint_impulses()
  equal(count, 3, "one connect: 3 values")
  assert(math.abs(impulses[3] - 3 * g * dt) < 1e-12, "vertical impulse " .. impulses[3])
  assert(math.abs(impulses[1]) < 1e-12 and math.abs(impulses[2]) < 1e-12, "no sideways impulse")
end)

test("snapshots: save_string / load_string and save / load give batches that solve to the same bits", function()
  local case = reference[1]
  local batch <close> = steel.batch(case.desc)
  batch:upload_rows(case.rows)
  batch:solve()
  local impulses = batch:impulses()
  local bytes = batch:save_string()
  equal(type(bytes), "string", "save_string gives a string")
  assert(#bytes > 0, "a non-empty snapshot")
  local copy1 <close> = steel.load_string(bytes)
  same(copy1:impulses(), impulses, "a loaded solved batch reads its recorded impulses")
  copy1:solve()
  same(copy1:impulses(), impulses, "and solves to the same bits")
  local path = os.tmpname()
  batch:save(path)
  local copy2 <close> = steel.load(path)
  copy2:solve()
  same(copy2:impulses(), impulses, "save / load: the same bits")
  os.remove(path)
  -- A NUL byte would cut the C path short, to another file than the one named.
  raises({ "the path holds a NUL byte" }, batch.save, batch, path .. "\0.other")
  raises({ "the path holds a NUL byte" }, steel.load, path .. "\0.other")
  raises({ "the path holds a NUL byte" }, batch.set_capture, batch, path .. "\0.other")
end)

test("snapshots: a scene batch's snapshot holds the scene; loaded, it reads per contact and propagates", function()
  local batch <close> = steel.batch()
  batch:set_options { articulated_contact_response = "propagation" }
  batch:upload_scene(one_box())
  batch:solve()
  local contacts = batch:contact_impulses()
  checks.near(contacts[1], 9.81 / 60, 1e-12, "the box's weight over one step")
  local copy <close> = steel.load_string(batch:save_string())
  same(copy:contact_impulses(), contacts, "the loaded batch reads the recorded contact impulses")
  copy:solve()
  batch:solve()
  same(copy:contact_impulses(), batch:contact_impulses(), "and solves, propagating, to the same bits")
  same(copy:joint_velocities(), batch:joint_velocities(), "joint velocities too")
end)

test("upload_rows: a count buffer changed by a metamethod during the call cannot outgrow the checks", function()
  -- value_count is read through the rows table's __index, which grows the row count it was
  -- given in a buffer; Steel must see the counts the lengths were checked against.
  local rows = one_contact()
  local counts = steel.buffer({ 1 }, "uint32")
  rows.world_row_counts = counts
  local grown = setmetatable(rows, { __index = function(_, key)
    if key == "value_count" then counts[1] = 200000 end
    return nil
  end })
  local batch <close> = steel.batch()
  raises({ "rows.block_offset has 2 values but needs 400000" }, batch.upload_rows, batch, grown)
end)

test("snapshots: capture appends every solve; bad snapshots are errors with Steel's message", function()
  local batch <close> = steel.batch()
  batch:upload_rows(one_contact())
  local path = os.tmpname()
  os.remove(path)
  batch:set_capture(path)
  batch:solve()
  batch:solve()
  batch:set_capture(nil)
  batch:solve()
  local file = assert(io.open(path, "rb"))
  local captured = file:read("a")
  file:close()
  os.remove(path)
  local single = batch:save_string()
  -- Two records: each a 4-byte size, then a snapshot of about a single one's size.
  assert(#captured > 2 * 4 and #captured < 3 * (#single + 4), "two records, got " .. #captured .. " bytes")
  raises({ "steel_batch_load_memory" }, steel.load_string, "not a snapshot")
  raises({ "steel_batch_load_file" }, steel.load, "/nonexistent/steel.snapshot")
  raises({ "string expected" }, steel.load_string, {})
end)

checks.finish()
