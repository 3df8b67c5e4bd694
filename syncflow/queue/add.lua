-- ARGV: bulk ("1"/"0"), the event's origin ("<side>:<ref>", '' = none), its resourceVersion, key1,
-- key2, ... Returns, per key, the lane to publish one message on (0 = none). An event whose origin
-- is a stored own write at that resourceVersion is an echo: nothing is added.
local bulk, origin, origin_rv, now, lanes = ARGV[1] == '1', ARGV[2], ARGV[3], now_ms(), {}
local echo = origin ~= '' and redis.call('HGET', OW, origin) == origin_rv
if echo then redis.call('HINCRBY', S, 'echoes', 1) end
local event = origin ~= '' and (origin .. '=' .. origin_rv) or ''
for i = 4, #ARGV do
  lanes[#lanes + 1] = echo and 0 or add(ARGV[i], bulk, now, event)
end
return lanes
