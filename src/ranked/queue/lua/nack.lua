-- Give a lease back. KEYS: ready, delayed, leases, attempts, dead, born.
-- ARGV: now_us or "", lease member, delay_us, max_attempts (0: no limit), max_age_us.
-- Reply: 0 not held (missing or expired), 1 requeued, 2 delayed, 3 dead, 4 dropped (stale).
local now = instant_us(ARGV[1])
local ready, delayed, leases, attempts, dead, born = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local member, delay = ARGV[2], tonumber(ARGV[3])
local max_attempts, max_age = tonumber(ARGV[4]), tonumber(ARGV[5])
local deadline = redis.call('ZSCORE', leases, member)
if not deadline or tonumber(deadline) <= now then
  return 0
end
redis.call('ZREM', leases, member)
local priority, delivery = struct.unpack('>dI4', member)
local id = string.sub(member, 13)
local parked = string.sub(member, 1, 8) .. id
if max_age > 0 and struct.unpack('>I8', id) < now - max_age then
  redis.call('ZREM', born, parked)
  return 4
end
if max_attempts > 0 and delivery >= max_attempts then
  redis.call('ZADD', dead, string.format('%d', now), member)
  redis.call('ZREM', born, parked)
  return 3
end
redis.call('HSET', attempts, id, delivery)
if delay > 0 then
  redis.call('ZADD', delayed, string.format('%d', now + delay), parked)
  return 2
end
redis.call('ZADD', ready, string.format('%.17g', priority), id)
return 1
