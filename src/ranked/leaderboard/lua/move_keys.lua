-- move_keys: put a window rebuilt under staging keys in place of the live one, only when
-- the board's index still holds the sequence number the rebuild read up to (no write
-- came in between); else drop the staging keys and write nothing else.
-- KEYS: the board's sequence key, then (staging, live) pairs. ARGV: instant (unused),
-- the expected sequence number.
-- Reply: 1 when the keys were moved (a live key whose staging key is absent is deleted;
-- a moved key keeps the staging key's TTL), 0 when the sequence number differed.
local applied = tonumber(redis.call('GET', KEYS[1]) or '0')
local moved = applied == tonumber(ARGV[2])
for i = 2, #KEYS, 2 do
  if not moved then
    redis.call('DEL', KEYS[i])
  elseif redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('RENAME', KEYS[i], KEYS[i + 1])
  else
    redis.call('DEL', KEYS[i + 1])
  end
end
if moved then
  return 1
end
return 0
