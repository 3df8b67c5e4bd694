-- ARGV: key. Unparks a parked key and adds it as an event. Returns {lane, keys newly marked dirty},
-- the lane -1 if the key is not parked.
local k = ARGV[1]
if redis.call('HEXISTS', X, k) == 0 then return {-1, 0} end
local lane = add(k, false, now_ms(), '')
return {lane, added}
