-- friend_scores: a member and its friends with their current scores on a board, read in
-- one atomic step (no cache: every call reads the scores as they are).
-- KEYS: board, the member's friend set. ARGV: instant (unused), member.
-- Reply: flat {member, score, ...} for those on the board (the member once, even when
-- its own set holds it), in no particular order; the client ranks them.
local members = redis.call('SMEMBERS', KEYS[2])
local member, listed = ARGV[2], false
for i = 1, #members do
  if members[i] == member then
    listed = true
    break
  end
end
if not listed then
  members[#members + 1] = member
end
local reply, n = {}, 0
for first = 1, #members, 512 do -- unpack() has a stack limit: ZMSCORE in chunks
  local last = math.min(first + 511, #members)
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(members, first, last))
  for i = 1, last - first + 1 do
    if scores[i] then
      reply[n + 1], reply[n + 2] = members[first + i - 1], scores[i]
      n = n + 2
    end
  end
end
return reply
