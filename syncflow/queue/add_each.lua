-- ARGV: the most snapshots kept, then per event: its origin ("<side>:<ref>", '' = none), its
-- resourceVersion, its snapshot ('' = none), how many keys it adds, then those keys. The event adds of
-- several events in one call (a watch's read, a poll's listing: see add_event). Returns, per key, the
-- lane to publish one message on (0 = none), then how many of the keys it newly marked dirty.
local max_snapshots, now, lanes = tonumber(ARGV[1]), now_ms(), {}
local i = 2
while i <= #ARGV do
  local count = tonumber(ARGV[i + 3])
  add_event(ARGV, i + 4, i + 3 + count, false, ARGV[i], ARGV[i + 1], ARGV[i + 2], max_snapshots, now, lanes)
  i = i + 4 + count
end
lanes[#lanes + 1] = added
return lanes
