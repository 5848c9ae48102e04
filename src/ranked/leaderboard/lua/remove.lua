-- remove: delete members from every target, keeping the dense companions right, and
-- delete their fields from each target's ties hash (when it has one).
-- KEYS: (board, dense companion, counts companion[, ties hash]) per target.
-- ARGV: number of targets, then per target has ties hash (1/0), then member...
local targets = tonumber(ARGV[1])
local first_member = targets + 2
local removed = 0
local key_at = 1
local ties = {}
for t = 1, targets do
  if ARGV[t + 1] == '1' then
    -- A ties key of another type must fail before anything is removed.
    local probe = redis.pcall('HEXISTS', KEYS[key_at + 3], 'x')
    if type(probe) == 'table' and probe.err then
      return redis.error_reply(probe.err)
    end
    ties[t] = KEYS[key_at + 3]
    key_at = key_at + 4
  else
    key_at = key_at + 3
  end
end
key_at = 1
for t = 1, targets do
  for i = first_member, #ARGV do
    local text = redis.call('ZSCORE', KEYS[key_at], ARGV[i])
    if text then
      set_score(KEYS[key_at], KEYS[key_at + 1], KEYS[key_at + 2], ARGV[i], tonumber(text), nil)
      removed = removed + 1
    end
  end
  if ties[t] then
    for i = first_member, #ARGV do
      redis.call('HDEL', ties[t], ARGV[i])
    end
    key_at = key_at + 4
  else
    key_at = key_at + 3
  end
end
return removed
