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

  The key alone does not prove the data kept: a Redis restarted from an RDB snapshot brings the key
  back but not what was written after the snapshot (the single-use markers of the tokens redeemed
  since, which could redeem again). So KEYS[2] holds the run_id (INFO server) of the Redis process
  that wrote the key, or first read it since this was introduced: a key found under another
  process's run_id is a loss, whatever else the data holds, and is written anew as for a caller
  that knew it (the first caller after the restart writes it and the new run_id; the others then
  read that). A restart that lost nothing (AOF with every write synced, a clean shutdown) counts as
  a loss too, and so does a failover to a replica (another process): the tokens in flight are
  refused, the safe side. A key without a run_id beside it (written by a release before this) is
  kept, and the run_id written beside it.

  KEYS[1]  the key
  KEYS[2]  the key that holds the run_id of the Redis process the key was written or read by
  ARGV[1]  '1' when the caller had read the key before, else '0'
  ARGV[2]  the clock-skew margin in milliseconds
  ARGV[3]  the service's key prefix (prefixed to KEYS[1] too)
  ARGV[4]  the longest a token lives, in milliseconds
  ARGV[5]  the most SCAN iterations (of COUNT 1000) looking for the service's keys
]]
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local runId = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)') or ''
local current = redis.call('GET', KEYS[1])
if current then
  local writtenBy = redis.call('GET', KEYS[2])
  if writtenBy == runId then
    return { current, tostring(now) }
  end
  if not writtenBy then
    redis.call('SET', KEYS[2], runId)
    return { current, tostring(now) }
  end
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
if current or ARGV[1] == '1' then
  epoch = epoch + tonumber(ARGV[2])
elseif holdsServiceData() then
  epoch = epoch - tonumber(ARGV[4]) - tonumber(ARGV[2])
end
redis.call('SET', KEYS[1], tostring(epoch))
redis.call('SET', KEYS[2], runId)
return { tostring(epoch), tostring(now) }
