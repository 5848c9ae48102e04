-- swap_field: compare-and-set of one hash field, the step an atomic read-modify-write
-- (merging board metadata) retries on: it writes only when nobody changed the field
-- since the caller read it.
-- KEYS: the hash. ARGV: instant (unused), field, expected value, has expected (1/0; 0:
-- the field must be absent), new value, ttl_ms ('' = none).
-- Reply: 1 when the field held the expected value and now holds the new one (and the
-- hash has the TTL), else 0, having written nothing.
local current = redis.call('HGET', KEYS[1], ARGV[2])
if ARGV[4] == '1' then
  if current ~= ARGV[3] then
    return 0
  end
elseif current then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[5])
if ARGV[6] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
end
return 1
