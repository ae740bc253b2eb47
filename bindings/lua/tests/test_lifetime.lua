-- test_lifetime.lua: batches are destroyed exactly once, whichever way they go: close(), <close>,
-- the garbage collector, an error half-way through creation or upload, or the end of the Lua
-- state. ctest runs this under steel_lua_host, which in the sanitizer build is compiled with
-- ASan and LeakSanitizer: any memory the binding leaked, or freed twice, fails the run there.
--
-- What LeakSanitizer cannot see is a batch that was never destroyed: libsteel's handle
-- registry still points at it. So the handle itself is watched: its low 32 bits are the
-- registry slot (steel.h: ids are generation-tagged; impl/handle_registry.hpp: the low half is
-- slot + 1, and freed slots are reused first). If every batch of a loop is destroyed before
-- the next is created, every one of them gets the same slot; a leak would move to a new one.
local steel = require "steel"
local checks = require "checks"
local test, equal = checks.test, checks.equal

local function slot(batch) return batch:handle() & 0xffffffff end

local function rows()
  return { world_dof_counts = {1}, world_row_counts = {1}, unconstrained_velocity = {-1},
           block_offset = {0, 0}, block_length = {1, 0}, jacobian = {1}, response = {0.5}, bias = {0},
           kind = {"contact_normal"} }
end

-- A free box on the ground, one contact: the smallest scene.
local function scene()
  return { gravity = { 0, 0, -9.81 }, world_body_count = { 1 }, world_contact_count = { 1 }, body_mass = { 1 },
           body_com = { 0, 0, 0 }, body_inertia = { 1, 1, 1, 0, 0, 0 }, joint_type = { "free" },
           joint_parent = { -1 }, joint_parent_frame = { 0, 0, 0, 1, 0, 0, 0 },
           joint_child_frame = { 0, 0, 0, 1, 0, 0, 0 }, joint_position = { 0, 0, 0.5, 1, 0, 0, 0 },
           joint_velocity = { 0, 0, 0, 0, 0, 0 }, contact_body_a = { 0 }, contact_body_b = { -1 },
           contact_point = { 0, 0, 0 }, contact_normal = { 0, 0, 1 }, contact_distance = { 0 },
           contact_friction = { 0.5 } }
end

local loops = tonumber(os.getenv("STEEL_LUA_LOOPS") or "") or 2000

test("close() in a loop reuses one slot", function()
  local first
  for i = 1, loops do
    local batch = steel.batch { world_count = 1 }
    batch:upload_rows(rows())
    batch:solve()
    first = first or slot(batch)
    equal(slot(batch), first, "slot in iteration " .. i)
    batch:close()
  end
end)

test("<close> in a loop reuses one slot, also when the block raises", function()
  local first
  for i = 1, loops do
    local ok = pcall(function()
      local batch <close> = steel.batch()
      first = first or slot(batch)
      equal(slot(batch), first, "slot in iteration " .. i)
      if i % 2 == 0 then error("half-way") end
    end)
    equal(ok, i % 2 == 1, "block result")
  end
end)

test("the garbage collector destroys dropped batches", function()
  local first
  for i = 1, loops // 4 do
    local batch = steel.batch()
    batch:upload_rows(rows())
    first = first or slot(batch)
    equal(slot(batch), first, "slot in iteration " .. i)
    batch = nil
    collectgarbage()
  end
end)

test("many dropped batches at once are all destroyed by a full collection", function()
  collectgarbage()
  local highest = 0
  for _ = 1, loops do
    local batch = steel.batch()
    highest = math.max(highest, slot(batch))
  end
  collectgarbage()
  collectgarbage()
  -- Every slot is free again, so as many batches alive at once fit in the slots seen before.
  local alive = {}
  for i = 1, highest do
    alive[i] = steel.batch()
    assert(slot(alive[i]) <= highest, "slot " .. slot(alive[i]) .. " above " .. highest .. ": a batch leaked")
  end
  for _, batch in ipairs(alive) do batch:close() end
end)

test("errors half-way leave nothing behind", function()
  local reference = steel.batch()
  local first = slot(reference)
  reference:close()
  for i = 1, loops // 4 do
    -- Create fails in Steel: the userdata was made closed first, so its __gc is a no-op.
    assert(not pcall(steel.batch, { world_count = 0 }))
    -- Create fails in the binding before Steel is called.
    assert(not pcall(steel.batch, { precision = "float16" }))
    -- Upload fails half-way through converting tables (temporaries are Lua userdata).
    local batch <close> = steel.batch()
    local bad = rows()
    bad.kind = { "nope" }
    assert(not pcall(batch.upload_rows, batch, bad))
    bad = rows()
    bad.response = { -1 }
    assert(not pcall(batch.upload_rows, batch, bad))
    assert(not pcall(batch.set_options, batch, { solve_mode = "colored" }))
    assert(not pcall(batch.impulses, batch))
    -- Scene uploads failing in the binding (a bad name, a short array) and in Steel.
    local bad_scene = scene()
    bad_scene.joint_type = { "hinge" }
    assert(not pcall(batch.upload_scene, batch, bad_scene))
    bad_scene = scene()
    bad_scene.body_com = { 0, 0 }
    assert(not pcall(batch.upload_scene, batch, bad_scene))
    bad_scene = scene()
    bad_scene.body_mass = { -1 }
    assert(not pcall(batch.upload_scene, batch, bad_scene))
    assert(not pcall(batch.contact_impulses, batch))
    equal(slot(batch), first, "slot in iteration " .. i)
    if i % 50 == 0 then collectgarbage() end
  end
end)

test("Lua memory stays flat over create/solve/read loops", function()
  local function cycle()
    local batch <close> = steel.batch { world_count = 1 }
    batch:upload_rows(rows())
    batch:set_options { record_residual_history = true, iterations = 3 }
    batch:solve()
    batch:impulses(); batch:velocities(); batch:stats(); batch:residual_history(0)
    batch:upload_scene(scene())
    batch:solve()
    batch:contact_impulses(); batch:joint_velocities(); batch:limit_impulses(); batch:drive_impulses()
    batch:body_velocities(); batch:body_poses(); batch:integrated_positions()
  end
  for _ = 1, 200 do cycle() end
  collectgarbage()
  local before = collectgarbage("count")
  for _ = 1, loops do cycle() end
  collectgarbage()
  local after = collectgarbage("count")
  assert(after < before + 64, string.format("Lua memory grew from %.0f KiB to %.0f KiB", before, after))
end)

-- Left open on purpose: lua_close() at the end of the run must destroy these through __gc
-- (LeakSanitizer in the sanitizer build would see the binding's part if it did not).
for _ = 1, 10 do
  local batch = steel.batch()
  batch:upload_rows(rows())
  batch:solve()
end
local kept_open = steel.batch() -- luacheck: ignore (a global reference until the state closes)
_G.kept_open = kept_open

checks.finish()
