-- lex_replace: replace a member's entry on a member-encoded board (every score 0) in one
-- step. The index hash maps member -> its stored encoding.
-- KEYS: board, dense companion, counts companion, index hash.
-- ARGV: member, encoded, operator (set|best), high_first (1/0), ttl_ms ('' = none).
-- Reply: {previous encoding or false, stored encoding, previous rank or false, rank,
-- changed 0/1}. Reads (which fail on a key of another type) come before any write.
local key, dense_key, counts_key, index_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local member, encoded, operator = ARGV[1], ARGV[2], ARGV[3]
local high, ttl = ARGV[4] == '1', ARGV[5]
local old = redis.call('HGET', index_key, member)
local new = encoded
if operator == 'best' and old then
  local better
  if high then
    better = bytes_less(old, encoded)
  else
    better = bytes_less(encoded, old)
  end
  if not better then
    new = old
  end
end
local previous_rank = false
if old then
  local index = index_of(key, old, high)
  if index then
    previous_rank = index + 1
  end
else
  redis.call('ZCARD', key) -- a board key of another type fails here, before any write
end
local changed = 0
if new ~= old then
  changed = 1
  if old and redis.call('ZSCORE', key, old) then
    set_score(key, dense_key, counts_key, old, 0, nil)
  end
  redis.call('HSET', index_key, member, new)
end
if not redis.call('ZSCORE', key, new) then
  -- A new entry, or one whose index outlived it: (re)add it.
  set_score(key, dense_key, counts_key, new, nil, 0)
end
if ttl ~= '' then
  for _, name in ipairs({key, dense_key, counts_key, index_key}) do
    redis.call('PEXPIRE', name, ttl)
  end
end
return {old, new, previous_rank, index_of(key, new, high) + 1, changed}
