--[[
  Takes a value with the time it had left: returns {value, milliseconds to live} and deletes the
  key, or nil when there is none. The time comes from Redis's clock, which every instance shares.

  KEYS[1]  the key
]]
local value = redis.call('GET', KEYS[1])
if not value then
  return false
end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('DEL', KEYS[1])
return {value, ttl}
