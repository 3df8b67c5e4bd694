-- The state of each key in ARGV in one work queue (read only; syncflow/console/keystate.py).
-- KEYS: L, X, W, P, D, K, F, C, Q of the queue. Returns per key six values: state ('' when the queue
-- no longer holds it), home structure, since (ms, '' for none), attempts, cause, synced ('1'/'0'),
-- pending since (ms, '' for none).
local L, X, W, P, D, K, F, C, Q = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local out = {}
for _, k in ipairs(ARGV) do
  local leased = redis.call('ZSCORE', L, k)
  local parked = redis.call('HGET', X, k)
  local delayed = redis.call('ZSCORE', W, k)
  local pending = redis.call('ZSCORE', P, k)
  local dirty = redis.call('SISMEMBER', D, k) == 1
  local synced = redis.call('HGET', K, k)
  local queued = redis.call('HGET', Q, k) or pending or ''
  local state, home, since = '', '', ''
  if leased then state, home, since = 'running', 'L', leased
  elseif parked then state, home, since = 'parked', 'X', parked
  elseif delayed then state, home, since = 'retrying', 'W', delayed
  elseif pending or dirty then state, home, since = 'pending', (pending and 'P' or 'D'), queued
  elseif synced then state, home, since = 'synced', 'K', synced
  end
  out[#out + 1] = state
  out[#out + 1] = home
  out[#out + 1] = since or ''
  out[#out + 1] = redis.call('HGET', F, k) or '0'
  out[#out + 1] = redis.call('HGET', C, k) or ''
  out[#out + 1] = synced and '1' or '0'
  out[#out + 1] = queued
end
return out
