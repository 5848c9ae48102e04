-- ranks: score and rank of each member, as ONE flat array: score text, rank per member,
-- false, false when absent. ZMSCORE for the scores (a chunk of members per call: unpack()
-- is bounded by Lua's C stack), then one O(log n) command per present member: ZCOUNT on
-- the board (competition) or on the dense companion (dense), ZREVRANK/ZRANK (unique).
-- KEYS: board, dense companion. ARGV: high_first (1/0), style, member...
local CHUNK = 1000
local call = redis.call
local key = KEYS[1]
local high, style, last = ARGV[1] == '1', ARGV[2], #ARGV
local unique, count_key = style == 'unique', key
if style == 'dense' then
  count_key = KEYS[2]
end
local out, at = {}, 0
for first = 3, last, CHUNK do
  local texts = call('ZMSCORE', key, unpack(ARGV, first, math.min(first + CHUNK - 1, last)))
  for i = 1, #texts do
    local text, rank = texts[i], false
    if text then
      if unique then
        rank = index_of(key, ARGV[first + i - 1], high) + 1
      elseif high then
        rank = call('ZCOUNT', count_key, '(' .. text, '+inf') + 1
      else
        rank = call('ZCOUNT', count_key, '-inf', '(' .. text) + 1
      end
    end
    out[at + 1], out[at + 2] = text, rank
    at = at + 2
  end
end
return out
