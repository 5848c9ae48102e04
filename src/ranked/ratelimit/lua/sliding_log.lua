-- Sliding-window log: one sorted-set member per admitted hit, scored by its instant (us),
-- named "<now_us>:<seq>:<cost>"; a running total of units beside it, so deciding is O(1)
-- plus the stale entries removed (each removed once: amortised O(log n)).
-- KEYS[1] the log, KEYS[2] "<total units>:<seq>"; ARGV: now_us|"", cost, consume (1|0),
-- limit, window_us. Reply {allowed 1|0, remaining, reset_after_us, retry_after_us|-1}.
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local cost, consume = tonumber(ARGV[2]), ARGV[3] == '1'
local limit, window = tonumber(ARGV[4]), tonumber(ARGV[5])
local log, units = KEYS[1], KEYS[2]

local function cost_of(member)
  return tonumber(string.match(member, ':(%d+)$'))
end
local function sum(members)
  local total = 0
  for _, member in ipairs(members) do total = total + cost_of(member) end
  return total
end

local cutoff = string.format('%d', now - window)
local total, seq = 0, 0
local state = redis.call('GET', units)
if state then
  local t, s = string.match(state, '^(%d+):(%d+)$')
  total, seq = tonumber(t), tonumber(s)
else
  total = sum(redis.call('ZRANGE', log, 0, -1))  -- lost total: rebuild it from the log
end
local stale = sum(redis.call('ZRANGEBYSCORE', log, '-inf', cutoff))
total = total - stale

local allowed = total + cost <= limit
local write = consume and ((allowed and cost > 0) or stale > 0)
if allowed then total = total + cost end
local newest = nil
if allowed and cost > 0 then newest = now end
local last = redis.call('ZRANGE', log, -1, -1, 'WITHSCORES')
if last[2] and (newest == nil or tonumber(last[2]) > newest) then newest = tonumber(last[2]) end
local reset = 0
if total > 0 and newest then reset = newest + window - now end

if write then
  if stale > 0 then redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff) end
  if allowed and cost > 0 then
    seq = seq + 1
    redis.call('ZADD', log, string.format('%d', now), string.format('%d:%d:%d', now, seq, cost))
  end
  if total > 0 then
    local ttl = string.format('%d', math.ceil(reset / 1000))
    redis.call('SET', units, string.format('%d:%d', total, seq), 'PX', ttl)
    redis.call('PEXPIRE', log, ttl)
  else
    redis.call('DEL', units, log)
  end
end
if allowed then return {1, limit - total, reset, -1} end

-- Denied: the oldest live entries must expire until `cost` fits.
local need = total + cost - limit
local offset = 0
while true do
  local page = redis.call('ZRANGEBYSCORE', log, '(' .. cutoff, '+inf', 'WITHSCORES',
    'LIMIT', offset, 64)
  if #page == 0 then return {0, limit - total, reset, window} end  -- inconsistent state
  for i = 1, #page, 2 do
    need = need - cost_of(page[i])
    if need <= 0 then return {0, limit - total, reset, tonumber(page[i + 1]) + window - now} end
  end
  offset = offset + 64
end
