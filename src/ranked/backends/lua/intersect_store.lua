-- intersect_store: dest = board ∩ set with the board's scores, expiring after ttl_ms.
-- KEYS: dest, board, set. ARGV: ttl_ms.
local size = redis.call('ZINTERSTORE', KEYS[1], 2, KEYS[2], KEYS[3], 'WEIGHTS', 1, 0)
if size > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return size
