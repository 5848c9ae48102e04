-- ranked: helpers of the leaderboard's scripts, put in front of each script that calls
-- them (after the backends' own helpers) by ranked/backends/_scripts.py; the rules of
-- ranked/backends/lua/_lib.lua hold here too.
--
-- Scores: Lua 5.1 numbers are float64, exact for integers up to 2^53. A score never goes
-- through tostring() (it keeps only 14 digits): fmt() writes the 17 significant digits
-- that read back to the same float64. Score texts read from Redis (ZSCORE, ZRANGE) are
-- Redis's own round-trip-exact format and may be passed on unchanged, but the
-- companion keys need ONE canonical text per score, so they always use fmt().

--@ fmt
local function fmt(x)
  return string.format('%.17g', x)
end

--@ score_text
-- The canonical text of a new score: the submitted value's text when the score is the
-- value (the client sent it as '%.17g'), else fmt() of it.
local function score_text(new, value, value_text)
  if new == value then
    return value_text
  end
  return fmt(new)
end

--@ bytes_less
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

--@ stored_score
-- The member's stored score: Redis's round-trip-exact text (false when absent) and the
-- number it reads as (nil when absent).
local function stored_score(key, member)
  local text = redis.call('ZSCORE', key, member)
  if text then
    return text, tonumber(text)
  end
  return text, nil
end

--@ index_of
-- 0-based position in board order, or false when absent.
local function index_of(key, member, high)
  if high then
    return redis.call('ZREVRANK', key, member)
  end
  return redis.call('ZRANK', key, member)
end

--@ rank_of
-- 1-based rank of a member that holds the score `text`; O(log n) in every style:
-- unique = its position, competition = 1 + entries strictly better (ZCOUNT on the board),
-- dense = 1 + distinct scores strictly better (ZCOUNT on the dense companion).
local function rank_of(key, dense_key, member, text, high, style)
  if style == 'unique' then
    return index_of(key, member, high) + 1
  elseif style ~= 'competition' then
    key = dense_key
  end
  if high then
    return redis.call('ZCOUNT', key, '(' .. text, '+inf') + 1
  end
  return redis.call('ZCOUNT', key, '-inf', '(' .. text) + 1
end

--@ zrange
-- Rows at positions first..last in board order, as ZRANGE WITHSCORES returns them.
local function zrange(key, first, last, high)
  if high then
    return redis.call('ZRANGE', key, first, last, 'REV', 'WITHSCORES')
  end
  return redis.call('ZRANGE', key, first, last, 'WITHSCORES')
end

--@ zrange_member
-- The member at position `index` in board order.
local function zrange_member(key, index, high)
  if high then
    return redis.call('ZRANGE', key, index, index, 'REV')[1]
  end
  return redis.call('ZRANGE', key, index, index)[1]
end

--@ ranked_reply
-- The reply of a script answering rows: `flat` is ZRANGE WITHSCORES output at consecutive
-- board positions, of which the first `skip` rows are not part of the answer; the answer's
-- first row is at 0-based position `first_index` (needed for unique and competition
-- ranks only). Replies {first rank, first index, skip, flat}: only the first row's rank
-- is looked up (O(log n)); the client derives the others from it and the scores
-- (ranked/backends/_redis_ops.py), which keeps that per-row work off the server.
local function ranked_reply(key, dense_key, flat, skip, first_index, high, style)
  if #flat <= skip * 2 then
    return {0, 0, 0, {}}
  end
  local rank
  if style == 'unique' then
    rank = first_index + 1
  else
    rank = rank_of(key, dense_key, flat[skip * 2 + 1], flat[skip * 2 + 2], high, style)
  end
  return {rank, first_index, skip, flat}
end

--@ set_score
-- Move `member` from score `old` to `new` (nil = absent), keeping the dense-rank
-- companions right: `dense_key` holds each distinct score once (member = fmt(score)),
-- `counts_key` maps fmt(score) -> how many members hold it. `old_text`/`new_text`: fmt()
-- of the scores when the caller has them already (fmt costs as much as a small command).
local function set_score(key, dense_key, counts_key, member, old, new, old_text, new_text)
  if old == new then
    return
  end
  if new ~= nil then
    new_text = new_text or fmt(new)
    redis.call('ZADD', key, new_text, member)
  else
    redis.call('ZREM', key, member)
  end
  if old ~= nil then
    old_text = old_text or fmt(old)
    if redis.call('HINCRBY', counts_key, old_text, -1) <= 0 then
      redis.call('HDEL', counts_key, old_text)
      redis.call('ZREM', dense_key, old_text)
    end
  end
  if new ~= nil and redis.call('HINCRBY', counts_key, new_text, 1) == 1 then
    redis.call('ZADD', dense_key, new_text, new_text)
  end
end
