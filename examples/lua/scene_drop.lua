-- scene_drop.lua: scene mode from Lua. Boxes dropped on the ground, one world each, stepped for
-- five seconds; only the contacts' restitution differs between the worlds.
--
--   LUA_CPATH="build/bindings/lua/?.so" lua5.4 examples/lua/scene_drop.lua [OUTPUT_DIR]
--
-- Each world holds a 1 kg cube of side 0.4 m on a FREE joint, released at rest with its bottom
-- 1 m above the plane z = 0. This script is the collision detection: every step it gives the
-- four bottom corners as contacts with their signed heights (a contact with a gap only acts once
-- the gap would close within the step), and Steel builds and solves the rows. The next step's
-- state is batch:integrated_positions() and batch:joint_velocities(). Restitution e makes a
-- contact bounce back at e times its approach speed when that speed is above
-- restitution_threshold (0.5 m/s), so the boxes bounce lower each time until they rest. A
-- corner is a contact once its gap would close within the step, and restitution then replaces
-- the gap's bias: a fast box turns around up to |v| dt (7 cm here) above the ground, which the
-- plot shows.
-- Checks: the first bounce leaves at e times the landing speed, and every box ends at rest with
-- its four normal impulses carrying m g dt. Writes scene_drop.csv (heights over time) and
-- scene_drop.png.
local steel = require "steel"
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local experiment = require "experiment"

local out = experiment.output_dir(arg[1])
local restitutions = { 0.0, 0.5, 0.8 }
local worlds, m, h, g, dt, drop = #restitutions, 1.0, 0.2, 9.81, 1 / 60, 1.0
local steps = 300

-- The scene's fixed part: one box per world.
local scene = { dt = dt, gravity = {}, world_body_count = {}, world_contact_count = {}, body_mass = {},
                body_com = {}, body_inertia = {}, joint_type = {}, joint_parent = {}, joint_parent_frame = {},
                joint_child_frame = {}, joint_position = {}, joint_velocity = {} }
local function push(list, ...) for _, v in ipairs { ... } do list[#list + 1] = v end end
local inertia = m * (2 * h) ^ 2 / 6
for w = 1, worlds do
  push(scene.gravity, 0, 0, -g)
  push(scene.world_body_count, 1)
  push(scene.body_mass, m)
  push(scene.body_com, 0, 0, 0)
  push(scene.body_inertia, inertia, inertia, inertia, 0, 0, 0)
  push(scene.joint_type, "free")
  push(scene.joint_parent, -1)
  push(scene.joint_parent_frame, 0, 0, 0, 1, 0, 0, 0)
  push(scene.joint_child_frame, 0, 0, 0, 1, 0, 0, 0)
  push(scene.joint_position, 0, 0, h + drop, 1, 0, 0, 0)
  push(scene.joint_velocity, 0, 0, 0, 0, 0, 0)
end

-- v rotated by the unit quaternion (w, x, y, z) = q[at..at+3].
local function rotate(q, at, v)
  local w, x, y, z = q[at], q[at + 1], q[at + 2], q[at + 3]
  return (1 - 2 * (y * y + z * z)) * v[1] + 2 * (x * y - w * z) * v[2] + 2 * (x * z + w * y) * v[3],
         2 * (x * y + w * z) * v[1] + (1 - 2 * (x * x + z * z)) * v[2] + 2 * (y * z - w * x) * v[3],
         2 * (x * z - w * y) * v[1] + 2 * (y * z + w * x) * v[2] + (1 - 2 * (x * x + y * y)) * v[3]
end

-- The contacts at the current state: each bottom corner of a box that touches the ground or
-- would reach it within the step at the box's current fall speed. (Steel applies restitution to
-- every contact approaching faster than the threshold, whatever its gap, so a far-away corner
-- must not be given as a contact.)
local function find_contacts(q, qd)
  local fields = { "contact_body_a", "contact_body_b", "contact_normal", "contact_friction", "contact_restitution",
                   "contact_point", "contact_distance" }
  for _, field in ipairs(fields) do scene[field] = {} end
  for w = 1, worlds do
    local at, reach = 7 * (w - 1), math.max(0, -qd[6 * (w - 1) + 3] * dt) + 1e-3
    local count = 0
    for c = 0, 3 do
      local x, y, z = rotate(q, at + 4, { c & 1 == 1 and h or -h, c & 2 == 2 and h or -h, -h })
      if q[at + 3] + z <= reach then
        count = count + 1
        push(scene.contact_body_a, 0)
        push(scene.contact_body_b, -1)
        push(scene.contact_normal, 0, 0, 1)
        push(scene.contact_friction, 0.5)
        push(scene.contact_restitution, restitutions[w])
        push(scene.contact_point, q[at + 1] + x, q[at + 2] + y, q[at + 3] + z)
        push(scene.contact_distance, q[at + 3] + z)
      end
    end
    scene.world_contact_count[w] = count
  end
end

local batch <close> = steel.batch { world_count = worlds }
batch:set_options { iterations = 100 }
local q, qd = steel.buffer(7 * worlds), steel.buffer(6 * worlds)
local time, heights, vz, normal = { 0 }, {}, {}, {}
for w = 1, worlds do heights[w], vz[w] = { drop }, { 0 } end
for step = 1, steps do
  find_contacts(scene.joint_position, scene.joint_velocity)
  batch:upload_scene(scene)
  batch:solve()
  batch:integrated_positions(q)
  batch:joint_velocities(qd)
  scene.joint_position, scene.joint_velocity = q:totable(), qd:totable()
  time[step + 1] = step * dt
  for w = 1, worlds do
    heights[w][step + 1] = q[7 * (w - 1) + 3] - h -- the bottom face's height
    vz[w][step + 1] = qd[6 * (w - 1) + 3]
  end
  normal = batch:contact_impulses()
end

-- The first bounce: the step where the velocity turns from down to up.
for w = 1, worlds do
  local e = restitutions[w]
  for k = 2, steps do
    if vz[w][k] < 0 and vz[w][k + 1] >= 0 then
      local ratio = vz[w][k + 1] / -vz[w][k]
      print(string.format("e = %.1f: lands at %.3f m/s, leaves at %.3f m/s (ratio %.3f); final height %.2e m",
                          e, -vz[w][k], vz[w][k + 1], ratio, heights[w][steps + 1]))
      assert(math.abs(ratio - e) < 1e-6, "the first bounce leaves at e times the landing speed")
      break
    end
  end
  local first, total = 0, 0
  for v = 1, w - 1 do first = first + scene.world_contact_count[v] end
  assert(scene.world_contact_count[w] == 4, "at rest all four corners touch")
  for c = first, first + 3 do total = total + normal[6 * c + 1] end
  assert(math.abs(heights[w][steps + 1]) < 1e-3 and math.abs(vz[w][steps + 1]) < 1e-3, "the box comes to rest")
  assert(math.abs(total - m * g * dt) < 1e-6, "at rest the contacts carry m g dt")
end

local header, columns = { "time" }, { time }
for w = 1, worlds do
  header[#header + 1] = string.format("height_e%.1f", restitutions[w])
  columns[#columns + 1] = heights[w]
end
local csv = experiment.write_csv(out .. "/scene_drop.csv", header, columns)
local png = experiment.plot(experiment.script_dir() .. "/scene_drop.gp", out, out .. "/scene_drop.png")
print("wrote " .. csv .. " and " .. png)
