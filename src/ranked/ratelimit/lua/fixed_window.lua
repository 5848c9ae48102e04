-- Fixed window: one counter that starts with the first hit and lives `window` us.
-- KEYS[1] state "<start_us>:<count>"; ARGV: now_us|"", cost, consume (1|0), limit, window_us.
-- Reply {allowed 1|0, remaining, reset_after_us, retry_after_us (-1 when allowed)}.
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local cost, consume = tonumber(ARGV[2]), ARGV[3] == '1'
local limit, window = tonumber(ARGV[4]), tonumber(ARGV[5])

local start, count = now, 0
local state = redis.call('GET', KEYS[1])
if state then
  local s, c = string.match(state, '^(-?%d+):(%d+)$')
  s = tonumber(s)
  if now < s + window then
    start, count = s, tonumber(c)
  end
end
local expires = start + window
if count + cost > limit then
  return {0, limit - count, expires - now, expires - now}
end
count = count + cost
if consume and cost > 0 then
  -- string.format, never tostring: a microsecond instant has 16 digits.
  if start == now then  -- a new window: its end is the key's deadline
    redis.call('SET', KEYS[1], string.format('%d:%d', start, count),
      'PX', string.format('%d', math.ceil((expires - now) / 1000)))
  else
    redis.call('SET', KEYS[1], string.format('%d:%d', start, count), 'KEEPTTL')
  end
end
local reset = 0
if count > 0 then reset = expires - now end
return {1, limit - count, reset, -1}
