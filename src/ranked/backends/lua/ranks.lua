-- ranks: (score, rank) of each member, false when absent.
-- KEYS: board, dense companion. ARGV: high_first (1/0), style, member...
local key, dense_key = KEYS[1], KEYS[2]
local high, style = ARGV[1] == '1', ARGV[2]
local out = {}
for i = 3, #ARGV do
  local text = redis.call('ZSCORE', key, ARGV[i])
  if text then
    out[#out + 1] = {text, rank_of(key, dense_key, ARGV[i], text, high, style)}
  else
    out[#out + 1] = false
  end
end
return out
