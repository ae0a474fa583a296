--[[
  Counts distinct members of a set with expiry: one marker key per member, one counter.

  KEYS[1]  the member's marker
  KEYS[2]  the counter
  ARGV[1]  the time to live in milliseconds of a new counter

  Returns the counter: incremented when the marker was new, as it was otherwise.

  A new marker expires with the counter (or after ARGV[1] with a new one), never after it: a
  marker that outlived its counter would keep its member from being counted in the next window.
  One script, so that a member is counted once however many callers race, in one round trip.
]]
local ttl = redis.call('PTTL', KEYS[2])
if ttl <= 0 then
  ttl = ARGV[1]
end
if redis.call('SET', KEYS[1], '1', 'PX', ttl, 'NX') then
  local value = redis.call('INCR', KEYS[2])
  if redis.call('PTTL', KEYS[2]) < 0 then
    redis.call('PEXPIRE', KEYS[2], ARGV[1])
  end
  return value
end
return tonumber(redis.call('GET', KEYS[2]) or '0')
