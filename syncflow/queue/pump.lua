-- ARGV: grace (ms), limit, backoff base (ms), backoff cap (ms), max attempts, and "before": only
-- republish entries older than this time (ms; the first pass's time, so passes never loop).
-- 1. delayed keys that are due go through add; 2. expired leases count as a failed attempt and
-- are requeued (or parked past max attempts); 3. pending keys whose message is older than grace
-- are published again. Returns {now, promoted, expired, republished, key1, lane1, key2, lane2, ...}.
local grace, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local base, cap, max_attempts = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local now = now_ms()
local before = math.min(now, tonumber(ARGV[6]) or now)
local out = {now, 0, 0, 0}
local function emit(k, lane)
  if lane > 0 then
    out[#out + 1] = k
    out[#out + 1] = lane
  end
end

local due = redis.call('ZRANGEBYSCORE', W, '-inf', now, 'LIMIT', 0, limit)
for _, k in ipairs(due) do
  redis.call('ZREM', W, k)
  emit(k, add(k, redis.call('SISMEMBER', BK, k) == 1, now))
end
out[2] = #due

local expired = redis.call('ZRANGEBYSCORE', L, '-inf', now, 'LIMIT', 0, limit)
for _, k in ipairs(expired) do
  redis.call('ZREM', L, k)
  redis.call('HDEL', O, k)
  local attempts = record_failure(k, now, LEASE_EXPIRED)
  if redis.call('SISMEMBER', D, k) == 1 then
    emit(k, make_pending(k, now))
  elseif attempts >= max_attempts then
    park(k, now)
  else
    redis.call('ZADD', W, now + backoff_ms(attempts, base, cap), k)
  end
end
out[3] = #expired
redis.call('HINCRBY', S, 'expired', #expired)

local overdue = redis.call('ZRANGEBYSCORE', P, '-inf', '(' .. (before - grace), 'LIMIT', 0, limit)
for _, k in ipairs(overdue) do
  redis.call('ZADD', P, now, k)
  emit(k, lane_of(k))
end
out[4] = #overdue
redis.call('HINCRBY', S, 'republished', #overdue)
return out
