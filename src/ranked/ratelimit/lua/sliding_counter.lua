-- Sliding-window counter: clock-aligned windows; the previous window's count weighted
-- by how much of it the sliding window still covers, plus the current window's count.
-- KEYS[1] state "<window index>:<current>:<previous>"; ARGV: now_us|"", cost,
-- consume (1|0), limit, window_us. Reply {allowed 1|0, remaining, reset_after_us,
-- retry_after_us (-1 when allowed)}.
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local cost, consume = tonumber(ARGV[2]), ARGV[3] == '1'
local limit, window = tonumber(ARGV[4]), tonumber(ARGV[5])

local index = math.floor(now / window)
if index * window > now then index = index - 1 end
local start = index * window
local cur, prev = 0, 0
local state = redis.call('GET', KEYS[1])
if state then
  local i, c, p = string.match(state, '^(-?%d+):(%d+):(%d+)$')
  i = tonumber(i)
  if i >= index then
    cur, prev = tonumber(c), tonumber(p)
  elseif i == index - 1 then
    prev = tonumber(c)
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
  return {0, remaining, reset, retry}
end
cur = cur + cost
if consume and cost > 0 then
  redis.call('SET', KEYS[1], string.format('%d:%d:%d', index, cur, prev),
    'PX', string.format('%d', math.ceil((start + 2 * window - now) / 1000)))
end
local reset = 0
if cur > 0 then reset = start + 2 * window - now elseif prev > 0 then reset = start + window - now end
local remaining = math.floor(limit - (now_estimate + cost))
if remaining < 0 then remaining = 0 end
return {1, remaining, reset, -1}
