-- Shared prelude of every work-queue script. All keys of one queue share one hash tag.
-- KEYS: D dirty set, P pending zset (score = when its message was sent or last seen in the broker),
-- BK bulk-only set, L lease zset (score = deadline), O lease owner tokens, W delayed zset
-- (score = not-before), F failure counts, T first-failure times, X parked keys (value = park time),
-- E last error payloads, S counters, N strikes (failures that count towards parking: unclassified
-- errors and expired leases, never transient ones), C cause of a failing key, CX index of causes
-- (members "<cause>\0<key>", all scored 0, so one cause's keys are a lexicographic range),
-- LT events that came while a key was leased ("<origin>=<rv>" lines, or "*" for any other), SN the
-- newest watch snapshot of a key's object (syncflow.kube.snapshots), Q when each pending key became
-- pending (ms; a republished or rescanned message keeps it), K synced keys (when each key's last run
-- ended ok, ms; a key whose object or rule is gone leaves it), then what the agent's queues share: its
-- own writes (OW origin -> the resourceVersions of its last few writes, space-separated; OX origin by
-- expiry) and its rule
-- registry RULES (rule name -> entry, written by the watcher).
-- Lanes returned to the caller: 0 = publish nothing, 1 = event lane, 2 = bulk lane.
local D, P, BK, L, O, W, F, T, X, E, S, N, C, CX, LT, SN, Q, K, OW, OX, RULES =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11],
  KEYS[12], KEYS[13], KEYS[14], KEYS[15], KEYS[16], KEYS[17], KEYS[18], KEYS[19], KEYS[20], KEYS[21]

local added = 0 -- keys this script call newly marked dirty (client-go's "adds"), for the caller's metrics

local MAX_LEASED_EVENTS = 2048 -- bytes of LT per key; past it the key is simply dirty ("*")
-- resourceVersions kept per object written: one run may write an object more than once (its finalizer,
-- then its status), and every one of those writes has an echo
local OWN_WRITES_PER_OBJECT = 4

local LEASE_EXPIRED = '{"type":"LeaseExpired","error":"lease expired: the worker died or outran its lease"}'

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function lane_of(k)
  if redis.call('SISMEMBER', BK, k) == 1 then return 2 end
  return 1
end

local function backoff_ms(attempts, base, cap)
  return math.min(cap, base * 2 ^ (attempts - 1))
end

-- Record why k fails ('' = no known cause), keeping one index entry per failing key at most.
local function set_cause(k, cause)
  local old = redis.call('HGET', C, k)
  if old == cause then return end
  if old then redis.call('ZREM', CX, old .. '\0' .. k) end
  if cause == '' then
    redis.call('HDEL', C, k)
  else
    redis.call('HSET', C, k, cause)
    redis.call('ZADD', CX, 0, cause .. '\0' .. k)
  end
end

local function forget(k)
  redis.call('HDEL', F, k)
  redis.call('HDEL', T, k)
  redis.call('HDEL', E, k)
  redis.call('HDEL', N, k)
  set_cause(k, '')
end

local function unpark(k)
  redis.call('HDEL', X, k)
  forget(k)
end

-- Returns the failed attempts and the strikes; ``strike`` says whether this failure counts towards
-- parking, ``cause`` names what it failed on ('' = unknown).
local function record_failure(k, now, payload, strike, cause)
  local attempts = redis.call('HINCRBY', F, k, 1)
  redis.call('HSETNX', T, k, now)
  redis.call('HSET', E, k, payload)
  set_cause(k, cause)
  local strikes = tonumber(redis.call('HGET', N, k) or 0)
  if strike then strikes = redis.call('HINCRBY', N, k, 1) end
  return attempts, strikes
end

local function park(k, now)
  redis.call('HDEL', SN, k)
  redis.call('HSET', X, k, now)
  redis.call('SREM', BK, k)
end

-- An event for k while its lease is live: "<origin>=<rv>", or '' for one that cannot be an echo.
local function note_while_leased(k, event)
  local seen = redis.call('HGET', LT, k)
  if seen == '*' then return end
  if event == '' or (seen and #seen + #event >= MAX_LEASED_EVENTS) then
    redis.call('HSET', LT, k, '*')
  elseif seen then
    redis.call('HSET', LT, k, seen .. '\n' .. event)
  else
    redis.call('HSET', LT, k, event)
  end
end

-- Whether an event of origin at resourceVersion rv is the echo of a stored own write.
local function own_write(origin, rv)
  local stored = redis.call('HGET', OW, origin)
  return stored ~= false and rv ~= '' and string.find(' ' .. stored .. ' ', ' ' .. rv .. ' ', 1, true) ~= nil
end

-- Store an own write of origin at rv (kept until expires, ms), beside the object's last few.
local function store_own_write(origin, rv, expires)
  local versions = {}
  for version in string.gmatch(redis.call('HGET', OW, origin) or '', '%S+') do
    if version ~= rv then versions[#versions + 1] = version end
  end
  versions[#versions + 1] = rv
  while #versions > OWN_WRITES_PER_OBJECT do table.remove(versions, 1) end
  redis.call('HSET', OW, origin, table.concat(versions, ' '))
  redis.call('ZADD', OX, expires, origin)
end

-- Whether every event noted while k was leased is the echo of a stored own write.
local function only_echoes(seen)
  if not seen or seen == '*' then return false end
  for event in string.gmatch(seen, '[^\n]+') do
    local origin, rv = string.match(event, '^(.*)=([^=]*)$')
    if not origin or not own_write(origin, rv) then return false end
  end
  return true
end

local function make_pending(k, now)
  redis.call('ZADD', P, now, k)
  redis.call('HSET', Q, k, now)
  return lane_of(k)
end

-- keep_snapshot(k, snapshot, bulk, max): an event keeps its object as the snapshot of a sync or status
-- key (while fewer than max keys hold one, or k holds one already), or clears the one k had; a bulk
-- add (relist, resync: no newer view of the object) leaves it as it is.
local function keep_snapshot(k, snapshot, bulk, max_snapshots)
  if snapshot ~= '' and (string.sub(k, 1, 5) == 'sync/' or string.sub(k, 1, 7) == 'status/')
      and (redis.call('HEXISTS', SN, k) == 1 or redis.call('HLEN', SN) < max_snapshots) then
    redis.call('HSET', SN, k, snapshot)
  elseif not bulk then
    redis.call('HDEL', SN, k)
  end
end

-- add(k): mark dirty and, unless leased, pending; returns the lane to publish on.
-- A bulk add (relist, resync) never unparks; an event add does, forgetting past failures.
-- An expired lease (its worker died) is dropped and counted as a failed attempt. ``event``: the
-- "<origin>=<rv>" of the watch event adding k ('' for none), kept aside while k is leased.
local function add(k, bulk, now, event)
  if redis.call('HEXISTS', X, k) == 1 then
    if bulk then return 0 end
    unpark(k)
  end
  local deadline = redis.call('ZSCORE', L, k)
  local expired = deadline and tonumber(deadline) <= now
  if expired then
    redis.call('ZREM', L, k)
    redis.call('HDEL', O, k)
    redis.call('HDEL', LT, k)
    redis.call('HINCRBY', S, 'expired', 1)
    record_failure(k, now, LEASE_EXPIRED, true, '')
  elseif deadline then
    note_while_leased(k, bulk and '' or (event or ''))
  end
  if redis.call('SISMEMBER', D, k) == 1 then
    if expired then
      -- dirtied while leased; never pending while leased, so publish now
      if not bulk then redis.call('SREM', BK, k) end
      return make_pending(k, now)
    end
    -- already dirty: only an event upgrading bulk-only work publishes (a second, faster message)
    if not bulk and redis.call('SREM', BK, k) == 1 and redis.call('ZSCORE', P, k) then
      return 1
    end
    return 0
  end
  redis.call('SADD', D, k)
  added = added + 1
  redis.call('ZREM', W, k)
  if bulk then redis.call('SADD', BK, k) else redis.call('SREM', BK, k) end
  if deadline and not expired then return 0 end -- leased: done() republishes it
  return make_pending(k, now)
end

-- add_event(keys, first, last, bulk, origin, origin_rv, snapshot, max, now, lanes): the adds of keys
-- keys[first..last] for one event (or, with bulk, one relist or resync), each lane appended to lanes.
-- An event whose origin ("<side>:<ref>", '' = none) is a stored own write at origin_rv is an echo:
-- nothing is added. Otherwise each sync or status key of an event keeps its snapshot ('' = none), or
-- loses the one it had; a bulk add (no newer view of the object) leaves it as it is.
local function add_event(keys, first, last, bulk, origin, origin_rv, snapshot, max_snapshots, now, lanes)
  local echo = origin ~= '' and own_write(origin, origin_rv)
  if echo then redis.call('HINCRBY', S, 'echoes', 1) end
  local event = origin ~= '' and (origin .. '=' .. origin_rv) or ''
  for i = first, last do
    if echo then
      lanes[#lanes + 1] = 0
    else
      keep_snapshot(keys[i], snapshot, bulk, max_snapshots)
      lanes[#lanes + 1] = add(keys[i], bulk, now, event)
    end
  end
end
