-- by_score: rows with low <= score <= high in board order, after `offset`, at most `count`.
-- KEYS: board, dense companion. ARGV: low, high (range texts), offset, count,
-- high_first (1/0), style. Reply: see ranked_reply.
local key, dense_key = KEYS[1], KEYS[2]
local low, high_bound, offset, count = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local high, style = ARGV[5] == '1', ARGV[6]
local rows
if high then
  rows = redis.call('ZRANGE', key, high_bound, low, 'BYSCORE', 'REV', 'LIMIT', offset, count,
    'WITHSCORES')
else
  rows = redis.call('ZRANGE', key, low, high_bound, 'BYSCORE', 'LIMIT', offset, count,
    'WITHSCORES')
end
local first = 0
if #rows > 0 and style ~= 'dense' then
  first = index_of(key, rows[1], high)
end
return ranked_reply(key, dense_key, rows, 0, first, high, style)
