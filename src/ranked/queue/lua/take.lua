-- Settle the queue, then pop, peek, reserve or count.
-- KEYS: ready, delayed, leases, attempts, dead, born.
-- ARGV: now_us or "", mode (pop|peek|reserve|counts), count, lease_us, max_attempts
-- (0: no limit), max_age_us (0: none), expected head id ("" : any).
-- Settling (at most LIMIT of each per call): delayed items due at or before now join
-- ready; leases whose deadline is at or before now are requeued with their delivery count
-- (or go to dead after max_attempts deliveries); with max_age, items pushed more than
-- max_age ago are dropped.
-- Reply: {now, status, rows...}; status 1 = the head was not the expected id (nothing
-- taken); rows are (id, priority, deliveries) triples; counts: {now, 0, ready, delayed,
-- leased, dead}.
local now = instant_us(ARGV[1])
local ready, delayed, leases, attempts, dead, born = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local mode, count, lease_us = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local max_attempts, max_age, expect = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local LIMIT = 1000
local now_text = string.format('%d', now)

local due = redis.call('ZRANGE', delayed, '-inf', now_text, 'BYSCORE', 'LIMIT', 0, LIMIT)
if #due > 0 then
  for _, member in ipairs(due) do
    redis.call('ZADD', ready, string.format('%.17g', (struct.unpack('>d', member))), string.sub(member, 9))
  end
  redis.call('ZREM', delayed, unpack(due))
end

local expired = redis.call('ZRANGE', leases, '-inf', now_text, 'BYSCORE', 'LIMIT', 0, LIMIT)
if #expired > 0 then
  for _, member in ipairs(expired) do
    local priority, delivery = struct.unpack('>dI4', member)
    local id = string.sub(member, 13)
    local stale = max_age > 0 and struct.unpack('>I8', id) < now - max_age
    if stale then
      redis.call('ZREM', born, string.sub(member, 1, 8) .. id)
    elseif max_attempts > 0 and delivery >= max_attempts then
      redis.call('ZADD', dead, now_text, member)
      redis.call('ZREM', born, string.sub(member, 1, 8) .. id)
    else
      redis.call('ZADD', ready, string.format('%.17g', priority), id)
      redis.call('HSET', attempts, id, delivery)
    end
  end
  redis.call('ZREM', leases, unpack(expired))
end

if max_age > 0 then
  local cutoff = '(' .. string.format('%d', now - max_age)
  local stale = redis.call('ZRANGE', born, '-inf', cutoff, 'BYSCORE', 'LIMIT', 0, LIMIT)
  if #stale > 0 then
    for _, member in ipairs(stale) do
      local id = string.sub(member, 9)
      if redis.call('ZREM', ready, id) == 0 then
        redis.call('ZREM', delayed, member)
      end
      redis.call('HDEL', attempts, id)
    end
    redis.call('ZREM', born, unpack(stale))
  end
end

if mode == 'counts' then
  return {now, 0, redis.call('ZCARD', ready), redis.call('ZCARD', delayed),
          redis.call('ZCARD', leases), redis.call('ZCARD', dead)}
end
if expect ~= '' then
  local head = redis.call('ZRANGE', ready, 0, 0)
  if head[1] ~= expect then
    return {now, 1}
  end
end
local reply = {now, 0}
if mode == 'peek' then
  local pairs = redis.call('ZRANGE', ready, 0, count - 1, 'WITHSCORES')
  for i = 1, #pairs, 2 do
    reply[#reply + 1] = pairs[i]
    reply[#reply + 1] = pairs[i + 1]
    reply[#reply + 1] = tonumber(redis.call('HGET', attempts, pairs[i]) or '0')
  end
  return reply
end
local popped = redis.call('ZPOPMIN', ready, count)
local retried = redis.call('EXISTS', attempts) == 1
local deadline = string.format('%d', now + lease_us)
for i = 1, #popped, 2 do
  local id, priority = popped[i], popped[i + 1]
  local delivery = 0
  if retried then
    delivery = tonumber(redis.call('HGET', attempts, id) or '0')
    redis.call('HDEL', attempts, id)
  end
  if mode == 'reserve' then
    delivery = delivery + 1
    redis.call('ZADD', leases, deadline, struct.pack('>dI4', tonumber(priority), delivery) .. id)
  elseif max_age > 0 then
    redis.call('ZREM', born, struct.pack('>d', tonumber(priority)) .. id)
  end
  reply[#reply + 1] = id
  reply[#reply + 1] = priority
  reply[#reply + 1] = delivery
end
return reply
