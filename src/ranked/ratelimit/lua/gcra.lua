-- GCRA: one key holding the theoretical arrival time (TAT, us, may be fractional).
-- KEYS[1] the TAT; ARGV: now_us|"", cost, consume (1|0), limit, window_us, burst.
-- Emission interval T = window / limit; tolerance = T * burst (redis-cell's semantics).
-- Reply {remaining, reset_after_us, retry_after_us (-1 when allowed)}.
local now = instant_us(ARGV[1])
local cost, consume = tonumber(ARGV[2]), ARGV[3] == '1'
local limit, window, burst = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])

local interval = window / limit
local tolerance = interval * burst
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + cost * interval
local early = new_tat - tolerance - now
local ttl, retry = new_tat - now, -1
if early > 0 then
  ttl, retry = tat - now, math.ceil(early)
elseif consume and cost > 0 then
  redis.call('SET', KEYS[1], string.format('%.17g', new_tat),
    'PX', string.format('%d', math.ceil(ttl / 1000)))
end
local remaining = math.floor((tolerance - ttl) / interval)
if remaining < 0 then remaining = 0 end
return {remaining, math.ceil(ttl), retry}
