-- hash_set: HSET fields, then PEXPIRE when a TTL is given.
-- KEYS: the hash. ARGV: ttl_ms ('' for none), field, value, field, value...
local key = KEYS[1]
local chunk = 500 -- pairs per HSET: unpack() has a small stack limit
for first = 2, #ARGV, 2 * chunk do
  local last = math.min(#ARGV, first + 2 * chunk - 1)
  redis.call('HSET', key, unpack(ARGV, first, last))
end
if ARGV[1] ~= '' then
  redis.call('PEXPIRE', key, ARGV[1])
end
return 0
