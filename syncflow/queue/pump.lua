-- ARGV: grace (ms), limit, backoff base (ms), backoff cap (ms), max attempts, verified (ms: when the
-- last complete broker scan began; 0 = none).
-- 1. delayed keys that are due go through add; 2. expired leases count as a failed attempt and
-- are requeued (or parked past max attempts); 3. pending keys whose message the last broker scan
-- proved lost (sent at least grace before the scan began, not seen by it) are published again.
-- Returns {now, promoted, expired, republished, overdue, added, key1, lane1, key2, lane2, ...}; overdue
-- counts pending keys older than grace that no scan has proved lost yet, added the promoted keys that
-- were newly marked dirty.
local grace, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local base, cap, max_attempts = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local verified = tonumber(ARGV[6])
local now = now_ms()
local out = {now, 0, 0, 0, 0, 0}
local function emit(k, lane)
  if lane > 0 then
    out[#out + 1] = k
    out[#out + 1] = lane
  end
end

local due = redis.call('ZRANGEBYSCORE', W, '-inf', now, 'LIMIT', 0, limit)
for _, k in ipairs(due) do
  redis.call('ZREM', W, k)
  emit(k, add(k, redis.call('SISMEMBER', BK, k) == 1, now, ''))
end
out[2] = #due

local expired = redis.call('ZRANGEBYSCORE', L, '-inf', now, 'LIMIT', 0, limit)
for _, k in ipairs(expired) do
  redis.call('ZREM', L, k)
  redis.call('HDEL', O, k)
  redis.call('HDEL', LT, k)
  local attempts, strikes = record_failure(k, now, LEASE_EXPIRED, true, '')
  if redis.call('SISMEMBER', D, k) == 1 then
    emit(k, make_pending(k, now))
  elseif strikes >= max_attempts then
    park(k, now)
  else
    redis.call('ZADD', W, now + backoff_ms(attempts, base, cap), k)
  end
end
out[3] = #expired
redis.call('HINCRBY', S, 'expired', #expired)

local lost = redis.call('ZRANGEBYSCORE', P, '-inf', '(' .. (verified - grace), 'LIMIT', 0, limit)
for _, k in ipairs(lost) do
  redis.call('ZADD', P, now, k)
  emit(k, lane_of(k))
end
out[4] = #lost
redis.call('HINCRBY', S, 'republished', #lost)
out[5] = redis.call('ZCOUNT', P, '-inf', '(' .. (now - grace))
out[6] = added
return out
