-- ARGV: started (ms), key1, key2, ... Keys whose message a broker scan begun at ``started`` saw:
-- a pending key's score moves up to ``started`` (its message was alive then). Returns how many moved.
local started = tonumber(ARGV[1])
local moved = 0
for i = 2, #ARGV do
  local score = redis.call('ZSCORE', P, ARGV[i])
  if score and tonumber(score) < started then
    redis.call('ZADD', P, started, ARGV[i])
    moved = moved + 1
  end
end
return moved
