-- Push items. KEYS: ready, delayed, seq, born.
-- ARGV: now_us or "", track_age (0/1), then (priority, visible_at_us, delay_us, item)
-- quadruples: visible at now + delay_us when delay_us > 0, else at visible_at_us (0: now).
-- Each item gets id = 8-byte sequence .. item, sequence = max(last + 1, now): strictly
-- increasing, so equal priorities leave in push order. Returns the number pushed.
local now = instant_us(ARGV[1])
local ready, delayed, seq, born = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local track = ARGV[2] == '1'
local last = tonumber(redis.call('GET', seq) or '0')
local pushed = 0
for i = 3, #ARGV, 4 do
  local priority, at, delay = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  if delay > 0 then
    at = now + delay
  end
  last = math.max(last + 1, now)
  local id = struct.pack('>I8', last) .. ARGV[i + 3]
  local parked = nil
  if at > now or track then
    parked = struct.pack('>d', tonumber(priority)) .. id
  end
  if at > now then
    redis.call('ZADD', delayed, string.format('%d', at), parked)
  else
    redis.call('ZADD', ready, priority, id)
  end
  if track then
    redis.call('ZADD', born, string.format('%d', last), parked)
  end
  pushed = pushed + 1
end
redis.call('SET', seq, string.format('%d', last))
return pushed
