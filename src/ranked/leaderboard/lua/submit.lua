-- submit: apply submissions (one, or a batch) to their targets, in order, atomically.
--
-- KEYS: (board, dense companion, counts companion[, ties hash]) per target, request after
-- request.
-- ARGV[1] '0': ONE plain request to ONE target (no layout, ties hash or keep), the common
-- submission, taken without the batch machinery (undo log, plan tables, closures it does
-- not need): ARGV = '0', member, value ('%.17g' text), operator, high_first (1/0), style,
-- ttl_ms ('' = none). Otherwise ARGV[1] is the number of requests, then per request:
--   member, value (its '%.17g' text), operator (best|set|incr|decr), high_first (1/0),
--   style, keep ('' = none),
--   composite (1/0), 2^time_bits, score_min, score_max, time field, has tie (1/0), tie,
--   number of targets, then per target: ttl_ms ('' = none), has ties hash (1/0).
-- Tie values: when a target has a ties hash and the request a tie, a changed score
-- HSETs the tie there; members trimmed by keep lose their field (HDEL).
-- Reply: ONE flat array, per request, per target: score, previous score or false, rank
-- or false, previous rank or false, changed 0/1 (the client knows how many targets each
-- request has; a flat array costs no nested table here and no nested list there).
--
-- Atomic also on error: every target's new score is computed (and checked) before the
-- request writes anything, and the writes of earlier requests of a batch are undone
-- before the error reply, because Redis keeps a failed script's writes. TTLs are set
-- last, once everything succeeded.

local function invalid(what, score)
  return 'RANKED_INVALID_SCORE ' .. what .. ' gives ' .. fmt(score) .. ', not a finite number'
end

local EXACT = 9007199254740992 -- 2^53: from here on, floats are 1 or more apart

-- An incr/decr result (`base` + `delta` = `new`) of magnitude 2^53 or more must be the
-- exact sum (ranked/backends/base.py `incremented`): Knuth's two-sum gives the rounding
-- error of the float64 addition, zero only for an exact sum.
local function inexact(base, delta, new)
  if new > -EXACT and new < EXACT then
    return false
  end
  local back = new - base
  return (base - (new - back)) + (delta - back) ~= 0
end

-- The new stored score, or nil and an error text. `packing` is nil for plain scores.
local function next_score(operator, old, value, high, packing)
  if packing == nil then
    local new = value
    if operator == 'incr' or operator == 'decr' then
      local base, delta = old or 0, value
      if operator == 'decr' then
        delta = -value
      end
      new = base + delta
      if new == new and new ~= math.huge and new ~= -math.huge
        and inexact(base, delta, new) then
        return nil, 'RANKED_OUT_OF_RANGE ' .. fmt(base) .. ' + ' .. fmt(delta) ..
          ' is not exact in a float64 (it would give ' .. fmt(new) ..
          '); increments must stay exact from 2**53 = 9007199254740992 on'
      end
    elseif operator == 'best' and old ~= nil then
      if (high and old >= value) or (not high and old <= value) then
        new = old
      end
    end
    if new ~= new or new == math.huge or new == -math.huge then
      return nil, invalid(operator, new)
    end
    if new == 0 then
      new = 0 -- never store -0
    end
    return new
  end
  if (operator == 'incr' or operator == 'decr') and value == 0 and old ~= nil then
    return old -- adding nothing changes nothing: no new achieved-at time
  end
  local score = value
  if operator == 'incr' or operator == 'decr' then
    local base = 0
    if old ~= nil then
      base = math.floor(old / packing.scale) -- exact: scale is a power of two
    end
    if operator == 'incr' then
      score = base + value
    else
      score = base - value
    end
  end
  if score < packing.score_min or score > packing.score_max then
    return nil, 'RANKED_OUT_OF_RANGE score ' .. fmt(score) .. ' is outside [' ..
      fmt(packing.score_min) .. ', ' .. fmt(packing.score_max) .. '], the range of the layout'
  end
  local new = score * packing.scale + packing.field
  if operator == 'best' and old ~= nil then
    if (high and old >= new) or (not high and old <= new) then
      new = old
    end
  end
  return new
end

if ARGV[1] == '0' then
  local key, dense_key, counts_key = KEYS[1], KEYS[2], KEYS[3]
  local member, value_text, operator = ARGV[2], ARGV[3], ARGV[4]
  local high, style, ttl = ARGV[5] == '1', ARGV[6], ARGV[7]
  local value = tonumber(value_text)
  local old_text, old = stored_score(key, member)
  local new, problem = next_score(operator, old, value, high, nil)
  if problem then
    return redis.error_reply(problem)
  end
  local previous_rank = false
  if old_text then
    previous_rank = rank_of(key, dense_key, member, old_text, high, style)
  end
  local rank, changed, new_text = previous_rank, 0, old_text
  if old ~= new then
    changed, new_text = 1, score_text(new, value, value_text)
    set_score(key, dense_key, counts_key, member, old, new, nil, new_text)
    rank = rank_of(key, dense_key, member, new_text, high, style)
  end
  if ttl ~= '' then
    redis.call('PEXPIRE', key, ttl)
    redis.call('PEXPIRE', dense_key, ttl)
    redis.call('PEXPIRE', counts_key, ttl)
  end
  return {new_text, old_text, rank, previous_rank, changed}
end

-- Remove the worst entries beyond `keep` (and their tie values when `ties_key` is set);
-- true when `member` was among them.
local function trim(key, dense_key, counts_key, ties_key, keep, high, member, undo)
  local excess = redis.call('ZCARD', key) - keep
  if excess <= 0 then
    return false
  end
  local worst
  if high then
    worst = redis.call('ZRANGE', key, 0, excess - 1, 'WITHSCORES')
  else
    worst = redis.call('ZRANGE', key, keep, -1, 'WITHSCORES')
  end
  local dropped = false
  for i = 1, #worst, 2 do
    local gone, score = worst[i], tonumber(worst[i + 1])
    set_score(key, dense_key, counts_key, gone, score, nil)
    undo[#undo + 1] = {key, dense_key, counts_key, gone, score, nil}
    if ties_key then
      local value = redis.call('HGET', ties_key, gone)
      if value then
        redis.call('HDEL', ties_key, gone)
        undo[#undo + 1] = {tie = ties_key, member = gone, value = value}
      end
    end
    if gone == member then
      dropped = true
    end
  end
  return dropped
end

local undo = {}
local expiries = nil -- key -> ttl, built only when a target has a TTL
local replies, replied = {}, 0
local arg, key_at = 2, 1

local function fail(message)
  for i = #undo, 1, -1 do
    local entry = undo[i]
    if entry.tie then
      if entry.value then
        redis.call('HSET', entry.tie, entry.member, entry.value)
      else
        redis.call('HDEL', entry.tie, entry.member)
      end
    else
      set_score(entry[1], entry[2], entry[3], entry[4], entry[6], entry[5])
    end
  end
  return redis.error_reply(message)
end

local requests = tonumber(ARGV[1])
-- fail() undoes earlier requests only: a lone request fails before its first write, so it
-- keeps no undo log.
local logged = requests > 1

for request = 1, requests do
  -- value_text is fmt(value), written by the client: reused when the new score is the value.
  local member, value_text, operator = ARGV[arg], ARGV[arg + 1], ARGV[arg + 2]
  local value = tonumber(value_text)
  local high, style, keep = ARGV[arg + 3] == '1', ARGV[arg + 4], tonumber(ARGV[arg + 5])
  local packing = nil
  if ARGV[arg + 6] == '1' then
    packing = {
      scale = tonumber(ARGV[arg + 7]),
      score_min = tonumber(ARGV[arg + 8]),
      score_max = tonumber(ARGV[arg + 9]),
      field = tonumber(ARGV[arg + 10]),
    }
  end
  local tie = false
  if ARGV[arg + 11] == '1' then
    tie = ARGV[arg + 12]
  end
  local targets = tonumber(ARGV[arg + 13])
  arg = arg + 14
  -- An unchanged score keeps its rank, unless an earlier target of this request (the same
  -- key named twice) may have trimmed the member away.
  local rank_kept = keep == nil or targets == 1

  -- Read and check every target first: an error here leaves this request unwritten.
  local plan = {}
  for t = 1, targets do
    local key, dense_key, counts_key = KEYS[key_at], KEYS[key_at + 1], KEYS[key_at + 2]
    local ttl, ties_key = ARGV[arg], false
    if ARGV[arg + 1] == '1' then
      ties_key = KEYS[key_at + 3]
      key_at = key_at + 1
      -- A ties key of another type must fail now, before this request writes anything.
      local probe = redis.pcall('HEXISTS', ties_key, member)
      if type(probe) == 'table' and probe.err then
        return fail(probe.err)
      end
    end
    key_at, arg = key_at + 3, arg + 2
    -- old_text: Redis's round-trip-exact text of the stored score (fine for ranges and
    -- replies; the companions take fmt()).
    local old_text, old = stored_score(key, member)
    local new, problem = next_score(operator, old, value, high, packing)
    if problem then
      return fail(problem)
    end
    local previous_rank = false
    if old ~= nil then
      previous_rank = rank_of(key, dense_key, member, old_text, high, style)
    end
    plan[t] = {key, dense_key, counts_key, old, new, ttl, previous_rank, ties_key, old_text}
  end

  for t = 1, targets do
    local step = plan[t]
    local key, dense_key, counts_key, old, new = step[1], step[2], step[3], step[4], step[5]
    local ties_key = step[8]
    local changed, new_text = 0, step[9]
    if old ~= new then
      changed, new_text = 1, score_text(new, value, value_text)
      set_score(key, dense_key, counts_key, member, old, new, nil, new_text)
      if logged then
        undo[#undo + 1] = {key, dense_key, counts_key, member, old, new}
      end
      if ties_key and tie then
        local before = redis.call('HGET', ties_key, member)
        redis.call('HSET', ties_key, member, tie)
        undo[#undo + 1] = {tie = ties_key, member = member, value = before}
      end
    end
    local dropped = false
    if keep ~= nil then
      dropped = trim(key, dense_key, counts_key, ties_key, keep, high, member, undo)
    end
    local rank = false
    if dropped then
      rank = false
    elseif changed == 0 and rank_kept then
      rank = step[7]
    else
      rank = rank_of(key, dense_key, member, new_text, high, style)
    end
    if step[6] ~= '' then
      expiries = expiries or {}
      expiries[key], expiries[dense_key], expiries[counts_key] = step[6], step[6], step[6]
      if ties_key then
        expiries[ties_key] = step[6]
      end
    end
    replies[replied + 1], replies[replied + 2], replies[replied + 3] = new_text, step[9] or false, rank
    replies[replied + 4], replies[replied + 5] = step[7], changed
    replied = replied + 5
  end
end

if expiries then
  for key, ttl in pairs(expiries) do
    redis.call('PEXPIRE', key, ttl)
  end
end
return replies
