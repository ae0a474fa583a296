--[[
  Atomically adds to a counter and gives a new counter its time to live.

  KEYS[1]  the counter
  ARGV[1]  the amount to add (integer)
  ARGV[2]  the time to live in milliseconds, set only when the counter has none yet

  Returns the counter's new value.

  One script, so that no client ever sees a counter that was created but not yet given an
  expiry (INCR then PEXPIRE as two commands leaks a key forever if the client dies between).
]]
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return value
