-- ARGV: key1, key2, ... Returns, per key, 1 if the queue holds it (dirty, leased or backing off: a run
-- is coming), else 0. A parked key is not held. Reads only.
local held = {}
for i = 1, #ARGV do
  local k = ARGV[i]
  local holds = redis.call('SISMEMBER', D, k) == 1 or redis.call('ZSCORE', L, k) or redis.call('ZSCORE', W, k)
  held[i] = holds and 1 or 0
end
return held
