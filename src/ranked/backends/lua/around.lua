-- around: the window of before+after+1 rows around a member, shifted (not shrunk) at the
-- edges; replies {member's index in the window, rows} or false when the member is absent.
-- KEYS: board, dense companion. ARGV: member, before, after, high_first (1/0), style.
local key, dense_key = KEYS[1], KEYS[2]
local member, before, after = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local high, style = ARGV[4] == '1', ARGV[5]
local index = index_of(key, member, high)
if not index then
  return false
end
local last = redis.call('ZCARD', key) - 1
local first, stop = index - before, index + after
if first < 0 then
  stop, first = stop - first, 0
end
if stop > last then
  first, stop = math.max(0, first - (stop - last)), last
end
return {index - first, ranked_rows(key, dense_key, zrange(key, first, stop, high), first, high, style)}
