-- ARGV: bulk ("1"/"0"), the event's origin ("<side>:<ref>", '' = none), its resourceVersion, its
-- snapshot ('' = none), the most snapshots kept, key1, key2, ... Returns, per key, the lane to publish
-- one message on (0 = none), then how many of the keys it newly marked dirty. An event whose origin is
-- a stored own write at that resourceVersion is an echo: nothing is added. Otherwise each sync or
-- status key of an event keeps its snapshot, or loses the one it had; a bulk add (relist, resync: no
-- newer view of the object) leaves it as it is.
local bulk, origin, origin_rv, now, lanes = ARGV[1] == '1', ARGV[2], ARGV[3], now_ms(), {}
local snapshot, max_snapshots = ARGV[4], tonumber(ARGV[5])
local echo = origin ~= '' and own_write(origin, origin_rv)
if echo then redis.call('HINCRBY', S, 'echoes', 1) end
local event = origin ~= '' and (origin .. '=' .. origin_rv) or ''
for i = 6, #ARGV do
  local k = ARGV[i]
  if echo then
    lanes[#lanes + 1] = 0
  else
    keep_snapshot(k, snapshot, bulk, max_snapshots)
    lanes[#lanes + 1] = add(k, bulk, now, event)
  end
end
lanes[#lanes + 1] = added
return lanes
