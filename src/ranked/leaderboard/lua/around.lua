-- around: the window of before+after+1 rows around a member, shifted (not shrunk) at the
-- edges; replies {member's index in the window, rows (see ranked_reply)} or false when
-- the member is absent.
-- No ZCARD: the window is read first, and only a short read (the bottom edge) reads again,
-- shifted up by the rows missing.
-- KEYS: board, dense companion. ARGV: member, before, after, high_first (1/0), style.
local key, dense_key = KEYS[1], KEYS[2]
local member, before, after = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local high, style = ARGV[4] == '1', ARGV[5]
local index = index_of(key, member, high)
if not index then
  return false
end
local first, stop = index - before, index + after
if first < 0 then
  stop, first = stop - first, 0
end
local rows = zrange(key, first, stop, high)
local missing = stop - first + 1 - #rows / 2
if missing > 0 and first > 0 then
  -- The board ends before `stop` (its last row is at first + #rows/2 - 1 >= index).
  first = math.max(0, first - missing)
  rows = zrange(key, first, stop - missing, high)
end
return {index - first, ranked_reply(key, dense_key, rows, 0, first, high, style)}
