-- ARGV: the most snapshots kept, then key1, snapshot1, key2, snapshot2, ... ('' = none). Event adds of
-- objects as a listing saw them (a poll): each key keeps its own snapshot, or loses the one it had, as
-- add.lua's event add without an origin. Returns, per key, the lane to publish one message on (0 =
-- none), then how many of the keys it newly marked dirty.
local max_snapshots, now, lanes = tonumber(ARGV[1]), now_ms(), {}
for i = 2, #ARGV, 2 do
  local k = ARGV[i]
  keep_snapshot(k, ARGV[i + 1], false, max_snapshots)
  lanes[#lanes + 1] = add(k, false, now, '')
end
lanes[#lanes + 1] = added
return lanes
