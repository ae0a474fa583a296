--[[
  Adds one to a counter, giving a new counter its time to live, and reads other keys in the same
  atomic step: a client's request count and the state kept beside it, in one command.

  KEYS[1]      the counter
  KEYS[2..n]   the keys to read (on Redis Cluster, all keys share one hash tag)
  ARGV[1]      the time to live in milliseconds, set only when the counter has none yet

  Returns { the counter's new value, the value of KEYS[2], ... }, false (nil) for an absent key.
]]
local result = { redis.call('INCR', KEYS[1]) }
if redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
for index = 2, #KEYS do
  result[index] = redis.call('GET', KEYS[index])
end
return result
