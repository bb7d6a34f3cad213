package leveeredis

import "github.com/redis/go-redis/v9"

// The shared record of a breaker is a hash under the breaker's key:
//
//	version  integer, grows by one on every accepted transition (0: no record yet)
//	state    the circuitbreaker.State number (CLOSED 0, OPEN 1, DISABLED 3, FORCED_OPEN 4,
//	         METRICS_ONLY 5; HALF_OPEN is never written, it follows from OPEN's end)
//	until    end of OPEN, in microseconds of the Redis clock (TIME); 0 in other states
//	origin   the replica that wrote the record
//
// Every script reads TIME and answers with the remaining OPEN wait in microseconds rather
// than an instant, so that no replica's clock is ever compared with the store's. Numbers are
// written with string.format('%d') (epoch microseconds need 16 digits; Lua's default format
// keeps 14). Every reply is {code, version, state, remaining, origin}.

// breakerRecordLua reads the record: code 1.
const breakerRecordLua = `
local function record(code)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local r = redis.call('HMGET', KEYS[1], 'version', 'state', 'until', 'origin')
  local v = tonumber(r[1]) or 0
  local st = tonumber(r[2]) or 0
  local rem = (tonumber(r[3]) or 0) - now
  if rem < 0 then rem = 0 end
  return {code, v, st, rem, r[4] or '', now}
end
`

// breakerLoadScript returns the record. KEYS[1] record.
var breakerLoadScript = redis.NewScript(breakerRecordLua + `
local r = record(1)
return {r[1], r[2], r[3], r[4], r[5]}
`)

// breakerCASScript installs a transition. KEYS[1] record. ARGV: expected version, state,
// OPEN wait in microseconds, origin, channel. The transition is accepted when the record's
// version is the expected one, when there is no record (the store lost it: the proposer's
// view is the best there is), or when it proposes OPEN or FORCED_OPEN over a CLOSED record
// (OPEN wins: a replica that saw failures is not silenced by a close it had not seen). An
// accepted transition gets the version after the larger of the record's and the expected one,
// so that versions keep growing for the replicas that saw them before a loss, and is
// published on the channel as
// "version state remaining origin"; code 1. A refused one changes nothing; code 0 with the
// record as it is.
var breakerCASScript = redis.NewScript(breakerRecordLua + `
local r = record(0)
local want = tonumber(ARGV[2])
local expected = tonumber(ARGV[1])
local ok = r[2] == expected or r[2] == 0
if not ok and (want == 1 or want == 4) and r[3] == 0 then ok = true end
if not ok then return {r[1], r[2], r[3], r[4], r[5]} end
local v = math.max(r[2], expected) + 1
local wait = 0
if want == 1 then wait = tonumber(ARGV[3]) end
redis.call('HSET', KEYS[1], 'version', string.format('%d', v), 'state', string.format('%d', want),
  'until', string.format('%d', r[6] + wait), 'origin', ARGV[4])
redis.call('PUBLISH', ARGV[5], string.format('%d %d %d ', v, want, wait) .. ARGV[4])
return {1, v, want, wait, ARGV[4]}
`)

// breakerTrialScript grants the HALF_OPEN trial of the record's current OPEN version to one
// replica, for a lease. KEYS[1] record, KEYS[2] trial. ARGV: version, origin, lease in ms.
// Codes: 1 granted (or already held by origin; remaining is then the lease left, in
// microseconds), 0 held by another replica (remaining: its lease left), 2 the OPEN wait is
// not over on the store's clock (remaining: the wait left), -1 the version is not the
// record's or the record is not OPEN (the record follows).
var breakerTrialScript = redis.NewScript(breakerRecordLua + `
local r = record(-1)
if r[2] ~= tonumber(ARGV[1]) or r[3] ~= 1 then return {r[1], r[2], r[3], r[4], r[5]} end
if r[4] > 0 then return {2, r[2], r[3], r[4], r[5]} end
local mine = ARGV[1] .. ' ' .. ARGV[2]
local cur = redis.call('GET', KEYS[2])
if cur then
  local curv = string.match(cur, '^(%d+) ')
  if curv == ARGV[1] then
    local left = redis.call('PTTL', KEYS[2]) * 1000
    if cur == mine then return {1, r[2], r[3], left, ARGV[2]} end
    return {0, r[2], r[3], left, string.sub(cur, #curv + 2)}
  end
end
redis.call('SET', KEYS[2], mine, 'PX', ARGV[3])
return {1, r[2], r[3], tonumber(ARGV[3]) * 1000, ARGV[2]}
`)
