-- Move a held lease's deadline to now + lease_us. KEYS: leases.
-- ARGV: now_us or "", lease member, lease_us. Reply: the new deadline, or nil if not held.
local now = instant_us(ARGV[1])
local deadline = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not deadline or tonumber(deadline) <= now then
  return nil
end
local renewed = now + tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], 'XX', string.format('%d', renewed), ARGV[2])
return renewed
