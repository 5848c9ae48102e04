-- page: rows at board positions start..stop with their ranks (see ranked_reply).
-- KEYS: board, dense companion. ARGV: start, stop, high_first (1/0), style.
local key, dense_key = KEYS[1], KEYS[2]
local start, stop = tonumber(ARGV[1]), tonumber(ARGV[2])
local high, style = ARGV[3] == '1', ARGV[4]
return ranked_reply(key, dense_key, zrange(key, start, stop, high), 0, start, high, style)
