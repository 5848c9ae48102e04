-- Dead letters. KEYS: ready, dead, born. ARGV: now_us or "", mode (list|retry|purge), count
-- (-1: all), track_age (0/1).
-- list: {member, died_at, ...} oldest first; retry: the oldest back to ready with a fresh
-- delivery count (and a fresh age), returns how many; purge: deletes them, returns how many.
local now = instant_us(ARGV[1])
local ready, dead, born = KEYS[1], KEYS[2], KEYS[3]
local mode, count = ARGV[2], tonumber(ARGV[3])
if mode == 'list' then
  return redis.call('ZRANGE', dead, 0, count < 0 and -1 or count - 1, 'WITHSCORES')
end
if mode == 'purge' then
  local n = redis.call('ZCARD', dead)
  redis.call('DEL', dead)
  return n
end
if count < 0 then
  count = redis.call('ZCARD', dead)
end
local popped = redis.call('ZPOPMIN', dead, count)
for i = 1, #popped, 2 do
  local member = popped[i]
  local id = string.sub(member, 13)
  redis.call('ZADD', ready, string.format('%.17g', (struct.unpack('>d', member))), id)
  if ARGV[4] == '1' then
    redis.call('ZADD', born, string.format('%d', now), string.sub(member, 1, 8) .. id)
  end
end
return #popped / 2
