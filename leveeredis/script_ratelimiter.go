package leveeredis

import "github.com/redis/go-redis/v9"

// The limiter's scripts. Every script reads the time with Redis's TIME, so every replica sees
// one clock, and keeps all times in integer microseconds since the Unix epoch (about 1.8×10¹⁵,
// exact in a Lua double). Numbers written to Redis go through string.format('%d', x), because
// Lua's own number formatting keeps only 14 significant digits. Scripts return integers only.
//
// KEYS[1] is the state hash, KEYS[2] the limit set by ChangeLimitForPeriod (absent: the
// configured limit, ARGV[3], applies). The hash holds, for the cycle algorithm, c (the cycle
// of the stored permissions), p (the permissions of cycle c, negative while later cycles are
// reserved) and s (a sequence number, incremented by every grant); for GCRA, t (the
// theoretical arrival time) and s. The hash expires when the limiter is full again, which is
// the same as a fresh limiter.
//
// The acquire scripts return {code, wait, available, limit, seq, now}: code 1 granted (wait
// µs before use, 0 for now), 0 refused (wait: what it would have been), -1 invalid number of
// permits, -2 expired (the caller had given up by the time the script ran; nothing written).

// scriptCycles is Resilience4j's AtomicRateLimiter: cycles of ARGV[2] µs counted from the Unix
// epoch, permissions refreshed to min(p + elapsedCycles × limit, limit), a request for n
// reserved when its last permission's cycle begins within ARGV[4] µs.
// ARGV: n, period, default limit, timeout, deadline (0: none).
var scriptCycles = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local deadline = tonumber(ARGV[5])
local n = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local limit = tonumber(redis.call('GET', KEYS[2]) or ARGV[3])
if deadline > 0 and now > deadline then
  return {-2, 0, 0, limit, 0, now}
end
if n < 1 or n > limit then
  return {-1, 0, 0, limit, 0, now}
end
local c = math.floor(now / period)
local st = redis.call('HMGET', KEYS[1], 'c', 'p', 's')
local p = limit
local seq = 0
if st[1] then
  local sc = tonumber(st[1])
  p = tonumber(st[2])
  seq = tonumber(st[3])
  if c > sc then
    p = math.min(p + (c - sc) * limit, limit)
  else
    c = sc
  end
end
local wait = 0
if p < n then
  local k = c + 1 + math.floor((n - p - 1) / limit)
  wait = math.max(k * period - now, 0)
  if wait > tonumber(ARGV[4]) then
    return {0, wait, p, limit, seq, now}
  end
end
p = p - n
seq = seq + 1
redis.call('HSET', KEYS[1], 'c', string.format('%d', c), 'p', string.format('%d', p), 's', string.format('%d', seq))
local full = c + math.max(1, math.ceil((limit - p) / limit))
redis.call('PEXPIREAT', KEYS[1], string.format('%d', math.ceil(full * period / 1000) + 1))
return {1, wait, p, limit, seq, now}
`)

// scriptGCRA is the generic cell rate algorithm: one permission every period/limit µs
// (rounded up to a whole µs per request), a burst of limit permissions, tat the time at which
// the limiter would be empty of debt. ARGV as scriptCycles.
var scriptGCRA = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local deadline = tonumber(ARGV[5])
local n = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local limit = tonumber(redis.call('GET', KEYS[2]) or ARGV[3])
if deadline > 0 and now > deadline then
  return {-2, 0, 0, limit, 0, now}
end
if n < 1 or n > limit then
  return {-1, 0, 0, limit, 0, now}
end
local st = redis.call('HMGET', KEYS[1], 't', 's')
local tat = now
local seq = 0
if st[1] then
  tat = math.max(tonumber(st[1]), now)
  seq = tonumber(st[2])
end
local inc = math.ceil(n * period / limit)
local new = tat + inc
local wait = math.max(new - period - now, 0)
local avail = math.min(math.floor((period - (tat - now)) * limit / period), limit)
if wait > tonumber(ARGV[4]) then
  return {0, wait, avail, limit, seq, now}
end
seq = seq + 1
redis.call('HSET', KEYS[1], 't', string.format('%d', new), 's', string.format('%d', seq))
redis.call('PEXPIREAT', KEYS[1], string.format('%d', math.ceil(new / 1000) + 1))
return {1, wait, avail - n, limit, seq, now}
`)

// scriptGiveBack returns the n permissions of grant ARGV[2] when no grant followed it.
// ARGV: n, seq, period, default limit, algorithm (0 cycles, 1 GCRA). Returns 1 when given back.
var scriptGiveBack = redis.NewScript(`
local s = redis.call('HGET', KEYS[1], 's')
if not s or tonumber(s) ~= tonumber(ARGV[2]) then
  return 0
end
if ARGV[5] == '1' then
  local limit = tonumber(redis.call('GET', KEYS[2]) or ARGV[4])
  local inc = math.ceil(tonumber(ARGV[1]) * tonumber(ARGV[3]) / limit)
  redis.call('HINCRBY', KEYS[1], 't', -inc)
else
  redis.call('HINCRBY', KEYS[1], 'p', ARGV[1])
end
return 1
`)

// scriptChangeLimit sets the limit of every replica from the next cycle on, as Resilience4j's
// changeLimitForPeriod: the current cycle keeps the permissions it has under the old limit,
// and the permissions already reserved count against the new one. ARGV: new limit, period,
// default limit. Returns the new limit.
var scriptChangeLimit = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local period = tonumber(ARGV[2])
local old = tonumber(redis.call('GET', KEYS[2]) or ARGV[3])
local limit = tonumber(ARGV[1])
local st = redis.call('HMGET', KEYS[1], 'c', 'p')
if st[1] then
  local c = math.floor(now / period)
  local sc = tonumber(st[1])
  local p = tonumber(st[2])
  if c > sc then
    p = math.min(p + (c - sc) * old, old)
  else
    c = sc
  end
  redis.call('HSET', KEYS[1], 'c', string.format('%d', c), 'p', string.format('%d', p))
  local full = c + math.max(1, math.ceil((limit - p) / limit))
  redis.call('PEXPIREAT', KEYS[1], string.format('%d', math.ceil(full * period / 1000) + 1))
end
redis.call('SET', KEYS[2], ARGV[1])
return limit
`)

// scriptHeartbeat records this replica (ARGV[1]) as alive now, forgets replicas silent for
// ARGV[2] µs, and returns {live replicas, limit} with ARGV[3] as the default limit. KEYS[1] is
// the replicas' sorted set, KEYS[2] the limit.
var scriptHeartbeat = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local stale = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], string.format('%d', now), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - stale))
redis.call('PEXPIRE', KEYS[1], string.format('%d', math.ceil(stale / 1000)))
local limit = tonumber(redis.call('GET', KEYS[2]) or ARGV[3])
return {redis.call('ZCARD', KEYS[1]), limit}
`)
