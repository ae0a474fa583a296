--[[
  Sets the value only when the key is absent, and only while Redis still holds the data it held
  when the caller last read its epoch: a Redis flushed since (FLUSHDB, FLUSHALL: the connection
  stays up, so the caller may not know yet) has forgotten which keys were set, and a key's
  absence then proves nothing. Returns 1 when set, 0 when the key was there, -1 when the data
  has changed since the caller's reading (nothing is set; the caller reads the epoch again).

  KEYS[1]  the key
  KEYS[2]  the data epoch's key
  ARGV[1]  the value
  ARGV[2]  the time to live in milliseconds
  ARGV[3]  the epoch the caller last read

  One script, so that a flush cannot come between the check and the write.
]]
if redis.call('GET', KEYS[2]) ~= ARGV[3] then
  return -1
end
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  return 1
end
return 0
