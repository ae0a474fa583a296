--[[
  Since when this Redis has kept its data: the key holds the time it was first written, by Redis's
  own clock, and has no expiry. A Redis that lost its data (restarted without persistence, or
  flushed) has lost the key too, and the first caller afterwards writes it anew. Returns the
  time in milliseconds, as a string.

  KEYS[1]  the key
]]
local now = redis.call('TIME')
redis.call('SET', KEYS[1], tostring(now[1] * 1000 + math.floor(now[2] / 1000)), 'NX')
return redis.call('GET', KEYS[1])
