-- Token bucket shared by all workers. KEYS[1]: bucket hash; ARGV: rate (tokens/s), burst, count (default 1),
-- refund (default 0: tokens an earlier reservation of this caller left unspent, given back first).
-- Reserves count tokens and returns how many ms the caller must wait before using the last of them
-- (0 = now); each earlier token is due 1/rate s before the next.
local rate, burst, count = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3] or '1')
local refund = tonumber(ARGV[4] or '0')
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or burst
local ts = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate + refund) - count
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
if tokens >= 0 then return 0 end
return math.ceil(-tokens / rate * 1000)
