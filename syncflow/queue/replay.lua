-- ARGV: key. Unparks a parked key and adds it as an event. Returns the lane, or -1 if not parked.
local k = ARGV[1]
if redis.call('HEXISTS', X, k) == 0 then return -1 end
return add(k, false, now_ms(), '')
