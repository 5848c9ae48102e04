-- ranked: helpers shared by the scripts. A Redis script cannot import another file, so
-- the loader (ranked/backends/_scripts.py) puts in front of each script the helpers it
-- calls (and the helpers those call), each block starting at its '--@ name' line, in
-- this file's order. Only local function definitions: a script runs its whole text on
-- every call, so anything built here would be built again each time.

--@ instant_us
-- The instant of a procedure (ranked/backends/procedure.py): ARGV[1] in Unix microseconds,
-- or, when it is empty, the server's clock, so every client of one server shares one time.
local function instant_us(given)
  local now = tonumber(given)
  if now then
    return now
  end
  local t = redis.call('TIME')
  return t[1] * 1000000 + t[2]  -- Lua turns the two numeric strings into numbers
end
