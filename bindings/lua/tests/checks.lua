-- checks.lua: the few helpers Steel's Lua tests share. Each test is a named function; a failed
-- check raises with the test's name, and run() reports every test and fails at the end if any did.
local checks = {}

local failures, count = 0, 0

-- Runs fn as the test `name`; an error in it is a failure, reported with a traceback.
function checks.test(name, fn)
  count = count + 1
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    print("ok      " .. name)
  else
    failures = failures + 1
    print("FAILED  " .. name .. "\n" .. tostring(err))
  end
end

-- Exits non-zero if any test failed (closing the Lua state, so every __gc runs first).
function checks.finish()
  print(string.format("%d tests, %d failed", count, failures))
  os.exit(failures == 0 and 0 or 1, true)
end

function checks.equal(actual, expected, what)
  if actual ~= expected then
    error(string.format("%s: got %s, expected %s", what or "value", tostring(actual), tostring(expected)), 2)
  end
end

function checks.near(actual, expected, tolerance, what)
  if not (math.abs(actual - expected) <= tolerance) then
    error(string.format("%s: got %.17g, expected %.17g (tolerance %g)", what or "value", actual, expected,
                        tolerance), 2)
  end
end

-- Every element of two sequences equal, bit for bit (NaN never is).
function checks.same_sequence(actual, expected, what)
  if #actual ~= #expected then
    error(string.format("%s: %d values, expected %d", what, #actual, #expected), 2)
  end
  for i = 1, #expected do
    if actual[i] ~= expected[i] then
      error(string.format("%s[%d]: got %a, expected %a", what, i, actual[i], expected[i]), 2)
    end
  end
end

-- fn(...) must raise an error whose message contains every one of `fragments` (plain text).
function checks.raises(fragments, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("expected an error containing '" .. table.concat(fragments, "', '") .. "'; none was raised", 2) end
  local message = tostring(err)
  for _, fragment in ipairs(fragments) do
    if not message:find(fragment, 1, true) then
      error(string.format("error %q does not contain %q", message, fragment), 2)
    end
  end
  return message
end

return checks
