-- One HSCAN step of a hash of object keys (the synced record K), counted in Redis: returns the next
-- cursor, then "<rule>/<cluster>" and how many keys of that pair the step saw, so a count of 100,000
-- keys sends a few hundred short replies instead of every name (syncflow/console/overview.py). Keys
-- whose verb is not an object verb (a mode's control plane, rule-wide keys) count under the pair
-- "(control)/", whatever their rule and cluster.
-- KEYS: the hash. ARGV: cursor, COUNT, then the object verbs.
local reply = redis.call('HSCAN', KEYS[1], ARGV[1], 'COUNT', tonumber(ARGV[2]))
local counts, order, objects = {}, {}, {}
for i = 3, #ARGV do objects[ARGV[i]] = true end
local entries = reply[2]
for i = 1, #entries, 2 do
  local verb, pair = string.match(entries[i], '^([^/]*)/([^/]*/[^/]*)/')
  if verb and not objects[verb] then pair = '(control)/' end
  if pair then
    if not counts[pair] then
      counts[pair] = 0
      order[#order + 1] = pair
    end
    counts[pair] = counts[pair] + 1
  end
end
local out = {reply[1]}
for _, pair in ipairs(order) do
  out[#out + 1] = pair
  out[#out + 1] = counts[pair]
end
return out
