-- expire_at: PEXPIREAT every key at one absolute deadline (Unix ms).
-- KEYS: the keys. ARGV: deadline.
for i = 1, #KEYS do
  redis.call('PEXPIREAT', KEYS[i], ARGV[1])
end
return #KEYS
