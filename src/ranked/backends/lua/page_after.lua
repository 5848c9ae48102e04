-- page_after: up to `count` rows strictly after the point (score, member) in board order.
-- The point need not be on the board (or may hold another score there), so it is then
-- located by counting, not by ZRANK alone.
-- KEYS: board, dense companion. ARGV: score, member, count, high_first (1/0), style.
local call = redis.call
local key, dense_key = KEYS[1], KEYS[2]
local text, member = ARGV[1], ARGV[2]
local count, high, style = tonumber(ARGV[3]), ARGV[4] == '1', ARGV[5]
local start
local stored = call('ZSCORE', key, member)
if stored and tonumber(stored) == tonumber(text) then
  -- On the board at that score: the next row follows the member's own position.
  start = index_of(key, member, high) + 1
else
  -- `better`: rows before every row of the point's score in board order; `ties`: rows
  -- at that score, at positions better .. better+ties-1, ordered by member bytes
  -- (ascending boards) or reversed (high_first boards).
  local better, through
  if high then
    better = call('ZCOUNT', key, '(' .. text, '+inf')
    through = call('ZCOUNT', key, text, '+inf')
  else
    better = call('ZCOUNT', key, '-inf', '(' .. text)
    through = call('ZCOUNT', key, '-inf', text)
  end
  -- Binary search for the first tied row that comes after the point in board order:
  -- O(log ties * log n), no scan.
  local low, high_end = 0, through - better
  while low < high_end do
    local middle = math.floor((low + high_end) / 2)
    local tied = zrange_member(key, better + middle, high)
    local after_point
    if high then
      after_point = bytes_less(tied, member)
    else
      after_point = bytes_less(member, tied)
    end
    if after_point then
      high_end = middle
    else
      low = middle + 1
    end
  end
  start = better + low
end
local rows = zrange(key, start, start + count - 1, high)
return ranked_rows(key, dense_key, rows, start, high, style)
