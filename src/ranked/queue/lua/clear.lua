-- Delete the queue. KEYS: ready, delayed, leases, attempts, dead, born, seq.
-- Reply: how many items were waiting or leased.
local items = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3])
redis.call('DEL', unpack(KEYS))
return items
