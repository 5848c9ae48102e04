-- ranked: helpers shared by every script. A Redis script cannot import another file, so
-- the loader (ranked/backends/_scripts.py) puts this file in front of each script.
--
-- Scores: Lua 5.1 numbers are float64, exact for integers up to 2^53. A score never goes
-- through tostring() (it keeps only 14 digits): fmt() writes the 17 significant digits
-- that read back to the same float64. Score texts read from Redis (ZSCORE, ZRANGE) are
-- Redis's own round-trip-exact format and may be passed on unchanged, but the
-- companion keys need ONE canonical text per score, so they always use fmt().

local function fmt(x)
  return string.format('%.17g', x)
end

-- Members compare as unsigned bytes, as Redis orders equal scores. Lua's own '<' on
-- strings uses the C locale's collation, which need not be bytewise.
local function bytes_less(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local ca, cb = string.byte(a, i), string.byte(b, i)
    if ca ~= cb then
      return ca < cb
    end
  end
  return #a < #b
end

-- How many entries of `key` have a score strictly better than the score `text`.
local function count_better(key, high, text)
  if high then
    return redis.call('ZCOUNT', key, '(' .. text, '+inf')
  end
  return redis.call('ZCOUNT', key, '-inf', '(' .. text)
end

-- 0-based position in board order, or false when absent.
local function index_of(key, member, high)
  if high then
    return redis.call('ZREVRANK', key, member)
  end
  return redis.call('ZRANK', key, member)
end

-- 1-based rank of a member that holds the score `text`; O(log n) in every style.
local function rank_of(key, dense_key, member, text, high, style)
  if style == 'unique' then
    return index_of(key, member, high) + 1
  elseif style == 'competition' then
    return count_better(key, high, text) + 1
  end
  return count_better(dense_key, high, text) + 1
end

-- Rows at positions first..last in board order, as ZRANGE WITHSCORES returns them.
local function zrange(key, first, last, high)
  if high then
    return redis.call('ZRANGE', key, first, last, 'REV', 'WITHSCORES')
  end
  return redis.call('ZRANGE', key, first, last, 'WITHSCORES')
end

-- {member, score, rank, ...} for consecutive rows starting at board position
-- `first_index`: only the first row's rank is looked up; the others follow from it.
local function ranked_rows(key, dense_key, flat, first_index, high, style)
  local out = {}
  local rank, previous
  for i = 1, #flat, 2 do
    local member, text = flat[i], flat[i + 1]
    local score = tonumber(text)
    local position = first_index + (i - 1) / 2
    if style == 'unique' then
      rank = position + 1
    elseif previous == nil then
      rank = rank_of(key, dense_key, member, text, high, style)
    elseif score ~= previous then
      if style == 'competition' then
        rank = position + 1
      else
        rank = rank + 1
      end
    end
    previous = score
    out[#out + 1] = member
    out[#out + 1] = text
    out[#out + 1] = rank
  end
  return out
end

-- Dense-rank companions: `dense_key` holds each distinct score once (member = fmt(score)),
-- `counts_key` maps fmt(score) -> how many members hold it.
local function companion_leave(dense_key, counts_key, score)
  local text = fmt(score)
  if redis.call('HINCRBY', counts_key, text, -1) <= 0 then
    redis.call('HDEL', counts_key, text)
    redis.call('ZREM', dense_key, text)
  end
end

local function companion_enter(dense_key, counts_key, score)
  local text = fmt(score)
  if redis.call('HINCRBY', counts_key, text, 1) == 1 then
    redis.call('ZADD', dense_key, text, text)
  end
end

-- Move `member` from score `old` to `new` (nil = absent), keeping the companions right.
local function set_score(key, dense_key, counts_key, member, old, new)
  if old == new then
    return
  end
  if new == nil then
    redis.call('ZREM', key, member)
  else
    redis.call('ZADD', key, fmt(new), member)
  end
  if old ~= nil then
    companion_leave(dense_key, counts_key, old)
  end
  if new ~= nil then
    companion_enter(dense_key, counts_key, new)
  end
end
