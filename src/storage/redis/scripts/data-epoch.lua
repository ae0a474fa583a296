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

  A caller that never knew the key finds it missing on a Redis that lost its data, on a new Redis,
  and on one an earlier release used: releases before commit 02fca54 (2026-11-24) never wrote it. The last keeps its
  data (the single-use markers of the tokens it redeemed), and refusing every token it issued would
  fail every form in flight at an upgrade. So when the service's other keys are there (a loss takes
  them all; they all expire, so an idle service may have none), the data survived: the key is
  written as of the longest a token lives plus the margin ago, before any live token was issued,
  and those tokens (which carry no epoch) redeem. The look for a key is a SCAN of the service's
  prefix, bounded to ARGV[5] iterations: it runs only here, when the key is missing for a caller
  that never read it (at an instance's first connection), and one not found in time counts as a
  loss (the tokens from before are refused, as without this look).

  KEYS[1]  the key
  ARGV[1]  '1' when the caller had read the key before, else '0'
  ARGV[2]  the clock-skew margin in milliseconds
  ARGV[3]  the service's key prefix (prefixed to KEYS[1] too)
  ARGV[4]  the longest a token lives, in milliseconds
  ARGV[5]  the most SCAN iterations (of COUNT 1000) looking for the service's keys
]]
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local current = redis.call('GET', KEYS[1])
if current then
  return { current, tostring(now) }
end

local function holdsServiceData()
  local pattern = string.gsub(ARGV[3], '[%*%?%[%]\\]', '\\%0') .. '*'
  local cursor = '0'
  for _ = 1, tonumber(ARGV[5]) do
    local reply = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000)
    if #reply[2] > 0 then
      return true
    end
    cursor = reply[1]
    if cursor == '0' then
      return false
    end
  end
  return false
end

local epoch = now
if ARGV[1] == '1' then
  epoch = epoch + tonumber(ARGV[2])
elseif holdsServiceData() then
  epoch = epoch - tonumber(ARGV[4]) - tonumber(ARGV[2])
end
redis.call('SET', KEYS[1], tostring(epoch))
return { tostring(epoch), tostring(now) }
