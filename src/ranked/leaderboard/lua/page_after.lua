-- page_after: up to `count` rows strictly after the point (score, member) in board order.
-- The point need not be on the board (or may hold another score there).
-- KEYS: board, dense companion. ARGV: score, member, count, high_first (1/0), style.
-- Reply: see ranked_reply; its leading `skip` rows (the point itself, ties before it) are
-- not on the page, which is the next `count` rows (fewer at the end).
local call = redis.call
local key, dense_key = KEYS[1], KEYS[2]
local text, member = ARGV[1], ARGV[2]
local count, high, style = tonumber(ARGV[3]), ARGV[4] == '1', ARGV[5]
local score = tonumber(text)

-- True when a row at the point's score comes after the point: ties run in member byte
-- order (reversed on high_first boards).
local function after_point(tied)
  if tied == member then
    return false
  end
  if high then
    return bytes_less(tied, member)
  end
  return bytes_less(member, tied)
end

-- Common case, one range read: the rows from the point's score on. Those at the point's
-- score that do not come after it (the point, ties before it) lead them.
local fetched = count + 1
local rows
if high then
  rows = call('ZRANGE', key, text, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, fetched, 'WITHSCORES')
else
  rows = call('ZRANGE', key, text, '+inf', 'BYSCORE', 'LIMIT', 0, fetched, 'WITHSCORES')
end
local n = #rows
local skip = 0
while skip * 2 < n and tonumber(rows[skip * 2 + 2]) == score
  and not after_point(rows[skip * 2 + 1]) do
  skip = skip + 1
end

local first_index
if skip * 2 < n then
  if skip > 1 and n == fetched * 2 then
    -- More than the point itself was skipped: read the page past the skipped rows.
    if high then
      rows = call('ZRANGE', key, text, '-inf', 'BYSCORE', 'REV', 'LIMIT', skip, count,
        'WITHSCORES')
    else
      rows = call('ZRANGE', key, text, '+inf', 'BYSCORE', 'LIMIT', skip, count, 'WITHSCORES')
    end
    skip = 0
  end
elseif n < fetched * 2 then
  return {0, 0, 0, {}} -- nothing after the point
else
  -- Every row read ties with the point and precedes it: a long tie run. Count the rows
  -- before the point's score, then binary search the tied rows for the first one after
  -- the point: O(log ties * log n), no scan.
  local better, through
  if high then
    better = call('ZCOUNT', key, '(' .. text, '+inf')
    through = call('ZCOUNT', key, text, '+inf')
  else
    better = call('ZCOUNT', key, '-inf', '(' .. text)
    through = call('ZCOUNT', key, '-inf', text)
  end
  local low, high_end = 0, through - better
  while low < high_end do
    local middle = math.floor((low + high_end) / 2)
    if after_point(zrange_member(key, better + middle, high)) then
      high_end = middle
    else
      low = middle + 1
    end
  end
  first_index = better + low
  rows = zrange(key, first_index, first_index + count - 1, high)
  skip = 0
end
for i = #rows, (skip + count) * 2 + 1, -1 do
  rows[i] = nil -- rows past the page
end
if #rows <= skip * 2 then
  return {0, 0, 0, {}}
end
-- A first row at another score than the point's is the first of its score: its position
-- is the count of better rows, which is also its competition rank - 1.
local first, first_text = rows[skip * 2 + 1], rows[skip * 2 + 2]
if first_index == nil and style ~= 'dense' then
  first_index = index_of(key, first, high)
  if tonumber(first_text) ~= score then
    return {first_index + 1, first_index, skip, rows}
  end
end
return ranked_reply(key, dense_key, rows, skip, first_index or 0, high, style)
