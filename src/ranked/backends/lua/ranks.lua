-- ranks: score and rank of each member, as ONE flat array: score text, rank per member,
-- false, false when absent. ZMSCORE for the scores (a chunk of members per call: unpack()
-- is bounded by Lua's C stack), then rank_of per present member (O(log n) each).
-- KEYS: board, dense companion. ARGV: high_first (1/0), style, member...
local CHUNK = 1000
local call = redis.call
local key = KEYS[1]
local high, style, last = ARGV[1] == '1', ARGV[2], #ARGV
local dense_key = KEYS[2]
local out, at = {}, 0
for first = 3, last, CHUNK do
  local texts = call('ZMSCORE', key, unpack(ARGV, first, math.min(first + CHUNK - 1, last)))
  for i = 1, #texts do
    local text, rank = texts[i], false
    if text then
      rank = rank_of(key, dense_key, ARGV[first + i - 1], text, high, style)
    end
    out[at + 1], out[at + 2] = text, rank
    at = at + 2
  end
end
return out
