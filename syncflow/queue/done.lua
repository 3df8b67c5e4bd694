-- ARGV: key, token, outcome, delay (ms, for "after"), error payload, backoff base (ms),
-- backoff cap (ms), max attempts, cause of the failure ('' = unknown). Outcomes: ok, after (requeue after delay), transient (back off),
-- error (back off, park after max attempts strikes: unclassified errors and expired leases),
-- permanent (park now).
-- Returns {state, attempts, delay ms, lane}; state is lost, done, delayed, backoff, parked or
-- requeued (dirtied while running: published again now on the returned lane).
local k, token, outcome = ARGV[1], ARGV[2], ARGV[3]
local after, payload = tonumber(ARGV[4]), ARGV[5]
local base, cap, max_attempts = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local cause = ARGV[9] or ''
if redis.call('HGET', O, k) ~= token then
  redis.call('HINCRBY', S, 'lost', 1)
  return {'lost', 0, 0, 0}
end
local now = now_ms()
redis.call('ZREM', L, k)
redis.call('HDEL', O, k)
local dirty = redis.call('SISMEMBER', D, k) == 1
local state, attempts, delay = 'done', 0, 0
if outcome == 'ok' then
  forget(k)
elseif outcome == 'after' then
  state, delay = 'delayed', after
  redis.call('ZADD', W, now + delay, k)
else
  local strikes
  attempts, strikes = record_failure(k, now, payload, outcome ~= 'transient', cause)
  if outcome == 'permanent' or (outcome == 'error' and strikes >= max_attempts) then
    if not dirty then
      park(k, now)
      return {'parked', attempts, 0, 0}
    end
  else
    state, delay = 'backoff', backoff_ms(attempts, base, cap)
    redis.call('ZADD', W, now + delay, k)
  end
end
if dirty then
  redis.call('ZREM', W, k)
  return {'requeued', attempts, 0, make_pending(k, now)}
end
if outcome == 'ok' then redis.call('SREM', BK, k) end
return {state, attempts, delay, 0}
