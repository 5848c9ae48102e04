-- page_after: up to `count` rows strictly after the point (score, member) in board order.
-- The point need not be on the board, so it is located by counting, not by ZRANK alone:
-- `below` = entries before the point in ascending (score, member) order.
-- KEYS: board, dense companion. ARGV: score, member, count, high_first (1/0), style.
local key, dense_key = KEYS[1], KEYS[2]
local text, member = ARGV[1], ARGV[2]
local count, high, style = tonumber(ARGV[3]), ARGV[4] == '1', ARGV[5]
local below, at = 0, 0
local stored = redis.call('ZSCORE', key, member)
if stored and tonumber(stored) == tonumber(text) then
  below, at = redis.call('ZRANK', key, member), 1
else
  below = redis.call('ZCOUNT', key, '-inf', '(' .. text)
  -- Binary search among the entries tied at the point's score (they sit at positions
  -- below .. below+ties-1, ordered by member bytes): O(log ties * log n), no scan.
  local low, high_end = 0, redis.call('ZCOUNT', key, text, text)
  while low < high_end do
    local middle = math.floor((low + high_end) / 2)
    local tied = redis.call('ZRANGE', key, below + middle, below + middle)[1]
    if bytes_less(tied, member) then
      low = middle + 1
    else
      high_end = middle
    end
  end
  below = below + low
end
local start
if high then
  start = redis.call('ZCARD', key) - below
else
  start = below + at
end
local rows = zrange(key, start, start + count - 1, high)
return ranked_rows(key, dense_key, rows, start, high, style)
