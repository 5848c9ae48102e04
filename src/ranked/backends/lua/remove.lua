-- remove: delete members from every target, keeping the dense companions right.
-- KEYS: (board, dense companion, counts companion) per target. ARGV: member...
local removed = 0
for t = 1, #KEYS, 3 do
  for i = 1, #ARGV do
    local text = redis.call('ZSCORE', KEYS[t], ARGV[i])
    if text then
      set_score(KEYS[t], KEYS[t + 1], KEYS[t + 2], ARGV[i], tonumber(text), nil)
      removed = removed + 1
    end
  end
end
return removed
