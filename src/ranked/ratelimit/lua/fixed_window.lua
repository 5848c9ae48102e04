-- Fixed window: one counter that starts with the first hit and lives `window` us.
-- KEYS[1] a hash {s = start us, c = units}; ARGV: now_us|"", cost, consume (1|0), limit,
-- window_us. Reply {remaining, reset_after_us, retry_after_us (-1 when allowed)}.
-- Within a window a hit is HMGET + HINCRBY: no parsing, no formatting, and the key's
-- deadline (the window's end, set once) does not move.
local now = instant_us(ARGV[1])
local cost, limit, window = tonumber(ARGV[2]), tonumber(ARGV[4]), tonumber(ARGV[5])
local write = cost > 0 and ARGV[3] == '1'

local state = redis.call('HMGET', KEYS[1], 's', 'c')
local start = tonumber(state[1])
if start and now < start + window then
  local count, reset = tonumber(state[2]), start + window - now
  if count + cost > limit then return {limit - count, reset, reset} end
  if write then redis.call('HINCRBY', KEYS[1], 'c', cost) end
  count = count + cost
  if count == 0 then reset = 0 end
  return {limit - count, reset, -1}
end
-- A new window starts now.
if cost > limit then return {limit, window, window} end
if cost == 0 then return {limit, 0, -1} end
if write then
  -- ARGV[1] as given, or TIME's digits: never a Lua number turned into text
  local text = ARGV[1]
  if text == '' then text = string.format('%d', now) end
  redis.call('HSET', KEYS[1], 's', text, 'c', cost)
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
end
return {limit - cost, window, -1}
