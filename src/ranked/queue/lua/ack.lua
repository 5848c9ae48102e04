-- Acknowledge leases. KEYS: leases, born. ARGV: now_us or "", lease members...
-- A lease counts only while held: present and its deadline after now. Returns how many.
local now = instant_us(ARGV[1])
local acked = 0
for i = 2, #ARGV do
  local member = ARGV[i]
  local deadline = redis.call('ZSCORE', KEYS[1], member)
  if deadline and tonumber(deadline) > now then
    redis.call('ZREM', KEYS[1], member)
    redis.call('ZREM', KEYS[2], string.sub(member, 1, 8) .. string.sub(member, 13))
    acked = acked + 1
  end
end
return acked
