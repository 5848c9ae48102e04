-- Take a pending submission (promote or reject it): read and delete it in one step, so
-- two moderators cannot both apply it. Promotion also counts its score in the member's
-- history (as an accepted submission would).
-- KEYS: 1 held (hash), 2 member stats (hash). ARGV: 1 now_us|"", 2 id, 3 promote (1|0),
--   4 score (read from the entry by the caller).
-- Reply: the entry's stored text, or nil when there is none.
local now = instant_us(ARGV[1])
local found = redis.call('HGET', KEYS[1], ARGV[2])
if not found then
  return nil
end
redis.call('HDEL', KEYS[1], ARGV[2])
if ARGV[3] == '1' then
  local score = tonumber(ARGV[4])
  local s = redis.call('HMGET', KEYS[2], 'n', 'mean', 'm2')
  local n, mean, m2 = (tonumber(s[1]) or 0) + 1, tonumber(s[2]) or 0, tonumber(s[3]) or 0
  local delta = score - mean
  mean = mean + delta / n
  m2 = m2 + delta * (score - mean)
  redis.call('HSET', KEYS[2], 'last', ARGV[4], 'n', n, 'mean', string.format('%.17g', mean),
    'm2', string.format('%.17g', m2), 'bt', string.format('%d', now), 'base', ARGV[4])
end
return found
