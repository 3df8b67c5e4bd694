-- ARGV: cause, limit. Retries up to limit keys failing for this cause: a parked key is unparked and
-- added as an event, a backing-off one added as an event at once (others are pending or running).
-- Each key leaves the index (a new failure for the same cause puts it back).
-- Returns {keys taken from the index, keys newly marked dirty, key1, lane1, key2, lane2, ...}.
local cause, limit = ARGV[1], tonumber(ARGV[2])
local now = now_ms()
local entries = redis.call('ZRANGEBYLEX', CX, '[' .. cause .. '\0', '(' .. cause .. '\1', 'LIMIT', 0, limit)
local out = {#entries, 0}
for _, entry in ipairs(entries) do
  local k = string.sub(entry, #cause + 2)
  redis.call('ZREM', CX, entry)
  redis.call('HDEL', C, k)
  if redis.call('HEXISTS', X, k) == 1 or redis.call('ZSCORE', W, k) then
    local lane = add(k, false, now, '')
    if lane > 0 then
      out[#out + 1] = k
      out[#out + 1] = lane
    end
  end
end
out[2] = added
return out
