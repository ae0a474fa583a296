--[[
  Since when this Redis has kept its data: the key holds that time, by Redis's own clock, and has no
  expiry. A Redis that lost its data (restarted without persistence, or flushed) has lost the key
  too, and the first caller afterwards writes it anew. The value also names the data's life:
  tokens carry the one their instance read, and one of another is refused. A caller that knew the
  key before (it saw the data lost) writes it the clock-skew margin later, for the tokens that carry
  no epoch (issued before tokens carried it), judged by their issue time: they are stamped by the
  issuing instance's clock, which may run ahead of Redis's by that much, and one stamped just before
  the loss must not pass for one issued after it. Returns the time in milliseconds, as a string, and
  Redis's clock now (milliseconds), by which the caller measures its own clock's offset.

  KEYS[1]  the key
  ARGV[1]  '1' when the caller had read the key before, else '0'
  ARGV[2]  the clock-skew margin in milliseconds
]]
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local current = redis.call('GET', KEYS[1])
if current then
  return { current, tostring(now) }
end
local epoch = now
if ARGV[1] == '1' then
  epoch = epoch + tonumber(ARGV[2])
end
redis.call('SET', KEYS[1], tostring(epoch))
return { tostring(epoch), tostring(now) }
