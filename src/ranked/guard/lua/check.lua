-- The guard's stateful layers in one atomic step (ranked/guard/_procedures.py composes
-- rl_player / rl_ip in front: ranked.ratelimit's own scripts as local functions).
-- KEYS: 1 member stats (hash), 2 nonce, 3 board window (zset), 4 held (hash; the caller
--       stores a held submission there in a step of its own), 5 banned (set), then the
--       member limiter's keys, then the IP limiter's.
-- ARGV: 1 now_us|"", 2 member, 3 score, 4 nonce TTL ms (0: no nonce), 5 max step|"",
--   6 span us (0: none), 7 max change|"", 8 z threshold|"", 9 z min history,
--   10 pending rank (0: none), 11 higher is better (1|0), 12-13 unused,
--   14 member limiter keys, 15 IP limiter keys,
--   16-18 member policy (limit, window us, burst), 19-21 IP policy, 22 operator.
-- Reply {code (0 accepted, 1 rejected, 2 held), reason, member limiter's remaining,
--   reset us, retry us (-2: none), IP limiter's three, z|"", rank (0: not computed)}.
local now = instant_us(ARGV[1])
local member, score = ARGV[2], tonumber(ARGV[3])
local reply = {0, '', 0, 0, -2, 0, 0, -2, '', 0}
if redis.call('SISMEMBER', KEYS[5], member) == 1 then
  reply[1], reply[2] = 1, 'banned'
  return reply
end
local at, np, ni = 6, tonumber(ARGV[14]), tonumber(ARGV[15])
if np > 0 then
  local r = rl_player({unpack(KEYS, at, at + np - 1)}, {now, '1', '1', ARGV[16], ARGV[17], ARGV[18]})
  reply[3], reply[4], reply[5] = r[1], r[2], r[3]
  if r[3] >= 0 then
    reply[1], reply[2] = 1, 'rate-limited'
    return reply
  end
  at = at + np
end
if ni > 0 then
  local r = rl_ip({unpack(KEYS, at, at + ni - 1)}, {now, '1', '1', ARGV[19], ARGV[20], ARGV[21]})
  reply[6], reply[7], reply[8] = r[1], r[2], r[3]
  if r[3] >= 0 then
    reply[1], reply[2] = 1, 'rate-limited-ip'
    return reply
  end
end
local nonce_ttl = tonumber(ARGV[4])
if nonce_ttl > 0 and redis.call('EXISTS', KEYS[2]) == 1 then
  reply[1], reply[2] = 1, 'replayed-nonce'
  return reply
end
local s = redis.call('HMGET', KEYS[1], 'last', 'base', 'bt', 'n', 'mean', 'm2')
local last, base, bt = tonumber(s[1]), tonumber(s[2]), tonumber(s[3])
local n, mean, m2 = tonumber(s[4]) or 0, tonumber(s[5]) or 0, tonumber(s[6]) or 0
local step = tonumber(ARGV[5])
if step and last and math.abs(score - last) > step then
  reply[1], reply[2] = 1, 'velocity-step'
  return reply
end
local span = tonumber(ARGV[6])
if span > 0 and last then
  if not base or now - bt >= span then
    base, bt = last, now
  end
  if math.abs(score - base) > tonumber(ARGV[7]) then
    reply[1], reply[2] = 1, 'velocity-span'
    return reply
  end
end
local held = false
local zt = tonumber(ARGV[8])
if zt and n >= tonumber(ARGV[9]) then
  local var = m2 / (n - 1)
  if var > 0 then
    local z = (score - mean) / math.sqrt(var)
    reply[9] = string.format('%.17g', z)
    if math.abs(z) > zt then
      held = 'z-score'
    end
  end
end
local tier = tonumber(ARGV[10])
if not held and tier > 0 then
  local high = ARGV[11] == '1'
  local current = tonumber(redis.call('ZSCORE', KEYS[3], member))
  local result = score
  if ARGV[22] == 'incr' then
    result = (current or 0) + score
  elseif ARGV[22] == 'decr' then
    result = (current or 0) - score
  end
  local text = string.format('%.17g', result)
  local better
  if high then
    better = redis.call('ZCOUNT', KEYS[3], '(' .. text, '+inf')
  else
    better = redis.call('ZCOUNT', KEYS[3], '-inf', '(' .. text)
  end
  reply[10] = better + 1
  local gains = current == nil or (high and result > current) or (not high and result < current)
  if better + 1 <= tier and gains then
    held = 'rank-tier'
  end
end
if nonce_ttl > 0 then
  redis.call('SET', KEYS[2], '1', 'PX', nonce_ttl)
end
if held then
  reply[1], reply[2] = 2, held
  return reply
end
n = n + 1
local delta = score - mean
mean = mean + delta / n
m2 = m2 + delta * (score - mean)
local fields = {'last', ARGV[3], 'n', n, 'mean', string.format('%.17g', mean),
  'm2', string.format('%.17g', m2)}
if span > 0 and base then
  fields[#fields + 1], fields[#fields + 2] = 'base', string.format('%.17g', base)
  fields[#fields + 1], fields[#fields + 2] = 'bt', string.format('%d', bt)
end
redis.call('HSET', KEYS[1], unpack(fields))
return reply
