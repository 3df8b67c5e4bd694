-- ARGV: key, bulk ("1"/"0"). Returns the lane to publish one message on (0 = none).
return add(ARGV[1], ARGV[2] == '1', now_ms())
