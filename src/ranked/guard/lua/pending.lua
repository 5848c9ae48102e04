-- Every pending submission of a board. KEYS: 1 held (hash). ARGV: 1 now_us|"".
-- Reply: the hash's fields and values, flat (HGETALL).
local now = instant_us(ARGV[1])
return redis.call('HGETALL', KEYS[1])
