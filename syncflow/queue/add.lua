-- ARGV: bulk ("1"/"0"), key1, key2, ... Returns, per key, the lane to publish one message on (0 = none).
local bulk, now, lanes = ARGV[1] == '1', now_ms(), {}
for i = 2, #ARGV do
  lanes[#lanes + 1] = add(ARGV[i], bulk, now)
end
return lanes
