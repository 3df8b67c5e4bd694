-- ARGV: bulk ("1"/"0"), the event's origin ("<side>:<ref>", '' = none), its resourceVersion, its
-- snapshot ('' = none), the most snapshots kept, key1, key2, ... Returns, per key, the lane to publish
-- one message on (0 = none), then how many of the keys it newly marked dirty (see add_event).
local lanes = {}
add_event(ARGV, 6, #ARGV, ARGV[1] == '1', ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), now_ms(), lanes)
lanes[#lanes + 1] = added
return lanes
