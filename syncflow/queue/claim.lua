-- claim(k, token, ttl, rule): take key k's lease for the task ``token`` for ttl ms, if this message
-- is the one to process it. Returns {state, snapshot, rule entry, waited}: state is "claimed", "busy" (live
-- lease elsewhere: every add meanwhile already marked the key dirty, so done() requeues it), "stale"
-- (not pending: a duplicate or redelivered message) or "gone" (its rule is gone: the key ends here,
-- unleased, so a release waiting for the rule's runs never waits for it); a claim takes the key's
-- snapshot ('' for none) and reads its rule's registry entry ('' for none). rule is '' for a key whose
-- verb names no registry rule (a control key): it is never "gone". A claim of a live lease that the
-- same token holds is this run's own claim sent again (the queue, or RedisCluster's client, sends a
-- script again when its reply was lost after Redis ran it): it is "claimed" again, without the
-- snapshot the first claim took. Tokens are unique per run of a message (task id#nonce), so a
-- redelivered copy of a message still running is "busy". waited is how long (ms) a claimed key was
-- pending, -1 when that is not known (not claimed now, or a claim sent again).
local function claim(k, token, ttl, rule)
  local now = now_ms()
  local deadline = redis.call('ZSCORE', L, k)
  if deadline and tonumber(deadline) > now then
    if redis.call('HGET', O, k) == token then
      redis.call('ZADD', L, now + ttl, k)
      redis.call('HINCRBY', S, 'reclaimed', 1)
      return {'claimed', '', redis.call('HGET', RULES, rule) or '', -1}
    end
    redis.call('HINCRBY', S, 'busy', 1)
    return {'busy', '', '', -1}
  end
  if not redis.call('ZSCORE', P, k) then
    redis.call('HINCRBY', S, 'stale', 1)
    return {'stale', '', '', -1}
  end
  local since = redis.call('HGET', Q, k)
  local waited = since and math.max(0, now - tonumber(since)) or -1
  redis.call('ZREM', P, k)
  redis.call('HDEL', Q, k)
  redis.call('SREM', D, k)
  redis.call('HDEL', LT, k)
  local entry = redis.call('HGET', RULES, rule)
  local read, decoded = false, nil
  if entry and string.find(entry, '"gone"', 1, true) then -- decode only an entry that may say gone
    read, decoded = pcall(cjson.decode, entry)
  end
  if read and type(decoded) == 'table' and decoded.state == 'gone' then
    redis.call('HDEL', SN, k)
    redis.call('SREM', BK, k)
    redis.call('HDEL', K, k)
    forget(k)
    redis.call('HINCRBY', S, 'gone', 1)
    return {'gone', '', entry, -1}
  end
  redis.call('ZADD', L, now + ttl, k)
  redis.call('HSET', O, k, token)
  local snapshot = redis.call('HGET', SN, k)
  redis.call('HDEL', SN, k)
  return {'claimed', snapshot or '', entry or '', waited}
end
