-- Sliding-window counter: clock-aligned windows; the previous window's count weighted
-- by how much of it the sliding window still covers, plus the current window's count.
-- KEYS[1] a hash {i = window index, c = its units, p = the previous window's units};
-- ARGV: now_us|"", cost, consume (1|0), limit, window_us. Reply {remaining,
-- reset_after_us, retry_after_us (-1 when allowed)}. Within one window a hit is
-- HMGET + HINCRBY; the key's deadline (the window's end plus one window) is set once.
local now = instant_us(ARGV[1])
local cost, limit, window = tonumber(ARGV[2]), tonumber(ARGV[4]), tonumber(ARGV[5])

local index = math.floor(now / window)
if index * window > now then index = index - 1 end
local start = index * window
local cur, prev, same = 0, 0, false
local state = redis.call('HMGET', KEYS[1], 'i', 'c', 'p')
local i = tonumber(state[1])
if i then
  if i >= index then
    cur, prev, same = tonumber(state[2]), tonumber(state[3]), i == index
  elseif i == index - 1 then
    prev = tonumber(state[2])
  end
end

-- The estimate at instant `at` (in this window or the next) with `extra` more units.
local function estimate(at, extra)
  if at < start + window then
    return prev * (window - (at - start)) / window + cur + extra
  end
  return cur * (window - (at - start - window)) / window + extra
end

local now_estimate = estimate(now, 0)
if now_estimate + cost > limit then
  local at
  local room = limit - cost - cur
  if room >= 0 then
    at = start + math.ceil(window - room * window / prev)
  else
    at = start + window + math.ceil(window - (limit - cost) * window / cur)
  end
  -- float rounding may land a microsecond early: step until the hit really fits
  while estimate(at, cost) > limit do at = at + 1 end
  local retry = at - now
  if retry < 1 then retry = 1 end
  local reset = 0
  if cur > 0 then reset = start + 2 * window - now elseif prev > 0 then reset = start + window - now end
  local remaining = math.floor(limit - now_estimate)
  if remaining < 0 then remaining = 0 end
  return {remaining, reset, retry}
end
cur = cur + cost
if cost > 0 and ARGV[3] == '1' then
  if same then
    redis.call('HINCRBY', KEYS[1], 'c', cost)
  else  -- a new window: its index, counts and deadline
    redis.call('HSET', KEYS[1], 'i', index, 'c', cur, 'p', prev)
    redis.call('PEXPIRE', KEYS[1], math.ceil((start + 2 * window - now) / 1000))
  end
end
local reset = 0
if cur > 0 then reset = start + 2 * window - now elseif prev > 0 then reset = start + window - now end
local remaining = math.floor(limit - (now_estimate + cost))
if remaining < 0 then remaining = 0 end
return {remaining, reset, -1}
