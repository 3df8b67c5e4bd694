-- done(a, o): release key k's lease and record how its run ended. The arguments are a[o + 1] on:
-- key, token, outcome, delay (ms, for "after"), error payload, backoff base (ms), backoff cap (ms),
-- max attempts, cause of the failure ('' = unknown), own-write ttl (ms), own-write cap, gone ('1': the
-- run found the key's object or rule gone, so the key names nothing any more), then the run's own
-- writes as origin, resourceVersion pairs. An ok run records the key as synced in K (a gone one
-- removes it). Outcomes: ok, after (requeue after delay),
-- transient (back off), error (back off, park after max attempts strikes: unclassified errors and
-- expired leases), permanent (park now).
-- Returns {state, attempts, delay ms, lane}; state is lost, done, delayed, backoff, parked or
-- requeued (dirtied while running: published again now on the returned lane).
local function done(a, o)
  local k, token, outcome = a[o + 1], a[o + 2], a[o + 3]
  local after, payload = tonumber(a[o + 4]), a[o + 5]
  local base, cap, max_attempts = tonumber(a[o + 6]), tonumber(a[o + 7]), tonumber(a[o + 8])
  local cause = a[o + 9] or ''
  local now = now_ms()
  -- the run's writes are ours even if its lease was lost: store them first, then prune expired ones
  local echo_ttl, echo_cap = tonumber(a[o + 10]), tonumber(a[o + 11])
  local gone = a[o + 12] == '1'
  for i = o + 13, #a - 1, 2 do
    store_own_write(a[i], a[i + 1], now + echo_ttl)
  end
  local stale = redis.call('ZRANGEBYSCORE', OX, '-inf', now, 'LIMIT', 0, 64)
  local over = math.min(redis.call('ZCARD', OX) - #stale - echo_cap, 1000)
  if over > 0 then
    for _, entry in ipairs(redis.call('ZRANGE', OX, #stale, #stale + over - 1)) do stale[#stale + 1] = entry end
  end
  for _, origin in ipairs(stale) do
    redis.call('ZREM', OX, origin)
    redis.call('HDEL', OW, origin)
  end
  if redis.call('HGET', O, k) ~= token then
    redis.call('HINCRBY', S, 'lost', 1)
    return {'lost', 0, 0, 0}
  end
  redis.call('ZREM', L, k)
  redis.call('HDEL', O, k)
  local dirty = redis.call('SISMEMBER', D, k) == 1
  local seen = redis.call('HGET', LT, k)
  redis.call('HDEL', LT, k)
  if dirty and only_echoes(seen) then -- dirtied only by the echoes of this run's own writes
    redis.call('SREM', D, k)
    redis.call('HINCRBY', S, 'echoes', 1)
    dirty = false
  end
  if not dirty then redis.call('HDEL', SN, k) end -- what those echoes left is of no further use
  local state, attempts, delay = 'done', 0, 0
  if outcome == 'ok' then
    forget(k)
    if gone then redis.call('HDEL', K, k) else redis.call('HSET', K, k, now) end
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
end
