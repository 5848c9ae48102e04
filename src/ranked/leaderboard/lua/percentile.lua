-- percentile: {score, members, members with a strictly worse score}, or false when the
-- member is absent. KEYS: board. ARGV: member, high_first (1/0).
local key = KEYS[1]
local text = redis.call('ZSCORE', key, ARGV[1])
if not text then
  return false
end
local worse
if ARGV[2] == '1' then
  worse = redis.call('ZCOUNT', key, '-inf', '(' .. text)
else
  worse = redis.call('ZCOUNT', key, '(' .. text, '+inf')
end
return {text, redis.call('ZCARD', key), worse}
