-- ARGV: key, token, lease ttl (ms). Returns 1 if the lease is still ours and was extended.
local k, token, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
if redis.call('HGET', O, k) ~= token then return 0 end
redis.call('ZADD', L, 'XX', now_ms() + ttl, k)
return 1
