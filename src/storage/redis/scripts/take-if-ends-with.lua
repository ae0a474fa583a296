--[[
  Takes a value only when it ends with a given suffix: returns it and deletes the key; otherwise
  returns nil and leaves the key as it is.

  KEYS[1]  the key
  ARGV[1]  the suffix

  One script, so that the check and the delete cannot be separated by another caller's write.
]]
local value = redis.call('GET', KEYS[1])
if value and #value >= #ARGV[1] and string.sub(value, #value - #ARGV[1] + 1) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return value
end
return false
