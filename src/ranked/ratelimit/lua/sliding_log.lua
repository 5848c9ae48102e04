-- Sliding-window log: one sorted-set member per admitted hit, scored by its instant (us),
-- named "<now_us>:<seq>:<cost>"; beside it a summary "<total units>:<seq>:<oldest us>:
-- <newest us>", so a hit reads one string and touches the log only to add its entry or
-- when the oldest entry is stale (each entry removed once: amortised O(log n)).
-- KEYS[1] the log, KEYS[2] the summary; ARGV: now_us|"", cost, consume (1|0), limit,
-- window_us. Reply {remaining, reset_after_us, retry_after_us (-1 when allowed)}.
local now = instant_us(ARGV[1])
local cost, limit, window = tonumber(ARGV[2]), tonumber(ARGV[4]), tonumber(ARGV[5])
local log, summary = KEYS[1], KEYS[2]

local function sum(members)
  local total = 0
  for i = 1, #members do total = total + tonumber(string.match(members[i], ':(%d+)$')) end
  return total
end

local cutoff = now - window
local total, seq, oldest, newest = 0, 0, nil, nil
local state = redis.call('GET', summary)
if state then
  local t, s, o, n = string.match(state, '^(%d+):(%d+):(-?%d+):(-?%d+)$')
  total, seq, oldest, newest = tonumber(t), tonumber(s), tonumber(o), tonumber(n)
else  -- a new identity, or a lost summary: rebuild it from the log
  local all = redis.call('ZRANGE', log, 0, -1)
  if #all > 0 then
    total = sum(all)
    oldest = tonumber(redis.call('ZRANGE', log, 0, 0, 'WITHSCORES')[2])
    newest = tonumber(redis.call('ZRANGE', log, -1, -1, 'WITHSCORES')[2])
  end
end
local stale = 0
if oldest and oldest <= cutoff then
  stale = sum(redis.call('ZRANGEBYSCORE', log, '-inf', cutoff))
  total = total - stale
end

local allowed = total + cost <= limit
if allowed then total = total + cost end
if allowed and cost > 0 and (newest == nil or now > newest) then newest = now end
local reset = 0
if total > 0 then reset = newest + window - now end

if ARGV[3] == '1' and ((allowed and cost > 0) or stale > 0) then
  if stale > 0 then
    redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff)
    oldest = tonumber(redis.call('ZRANGE', log, 0, 0, 'WITHSCORES')[2])
  end
  if allowed and cost > 0 then
    seq = seq + 1
    redis.call('ZADD', log, now, string.format('%d:%d:%d', now, seq, cost))
    if oldest == nil or now < oldest then oldest = now end
  end
  if total > 0 then
    local ttl = math.ceil(reset / 1000)
    redis.call('SET', summary, string.format('%d:%d:%d:%d', total, seq, oldest, newest), 'PX', ttl)
    redis.call('PEXPIRE', log, ttl)
  else
    redis.call('DEL', summary, log)
  end
end
if allowed then return {limit - total, reset, -1} end

-- Denied: the oldest live entries must expire until `cost` fits. Every entry holds at
-- least one unit, so the first `need` live entries are always enough.
local need = total + cost - limit
local page = redis.call('ZRANGEBYSCORE', log, '(' .. string.format('%d', cutoff), '+inf',
  'WITHSCORES', 'LIMIT', 0, need)
for i = 1, #page, 2 do
  need = need - tonumber(string.match(page[i], ':(%d+)$'))
  if need <= 0 then return {limit - total, reset, tonumber(page[i + 1]) + window - now} end
end
return {limit - total, reset, window}  -- inconsistent state: the whole window
