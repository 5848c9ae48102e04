-- Token bucket: `burst` tokens, refilled continuously at limit / window per us.
-- KEYS[1] state "<tokens>:<last_us>"; ARGV: now_us|"", cost, consume (1|0), limit,
-- window_us, burst. Reply {remaining, reset_after_us, retry_after_us (-1 when allowed)}.
local now = instant_us(ARGV[1])
local cost, consume = tonumber(ARGV[2]), ARGV[3] == '1'
local limit, window, burst = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])

local rate = limit / window
local tokens = burst
local state = redis.call('GET', KEYS[1])
if state then
  local held, last = string.match(state, '^([^:]+):(-?%d+)$')
  tokens = tonumber(held)
  local elapsed = now - tonumber(last)
  if elapsed > 0 then
    tokens = tokens + elapsed * rate
    if tokens > burst then tokens = burst end
  end
end
if tokens < cost then
  return {math.floor(tokens), math.ceil((burst - tokens) / rate),
    math.ceil((cost - tokens) / rate)}
end
tokens = tokens - cost
local reset = math.ceil((burst - tokens) / rate)
if consume and cost > 0 then
  redis.call('SET', KEYS[1], string.format('%.17g:%d', tokens, now),
    'PX', string.format('%d', math.ceil(reset / 1000)))
end
return {math.floor(tokens), reset, -1}
