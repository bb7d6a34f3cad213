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
// The acquire scripts take KEYS[3], the replicas' heartbeat set, and KEYS[4], the ids of the
// grants made in the current cycle (a hash id -> "cycle n", emptied when the cycle changes).
// KEYS[5] holds the replicas' promises (a hash replica -> "cycle share"): the last cycle in
// which that replica grants nothing from its local share, and that share.
// ARGV: n, period, default limit, timeout, deadline (0: none), check id ("" none), replica
// id, staleness of a heartbeat in µs (0: do not count replicas), debt cycle, debt, share,
// promise (1: this replica grants nothing locally in the current and the next cycle), the
// replica count the caller knows (0: none), the cycles a promise is remembered after it ended.
//
// A check that carries a promise (and a deadline, so that a check run late promises nothing
// the replica did not count on) records it. Every check holds back, from what the caller may
// take, the share of each other replica whose promise does not cover the current cycle, and
// the caller's share for each replica the caller counts that has no promise recorded at all
// (Redis restarted empty): those replicas may be deciding alone, out of their local shares.
//
// The check id makes a check idempotent within its cycle: a check whose id was granted
// already is answered with that grant again and counted once. The debt is what this replica's
// local share granted from the debt cycle on while Redis was unavailable; when the debt cycle
// is an earlier one (the replica's estimate of Redis's clock lags behind a boundary), a share
// per cycle since is taken off, as the local share itself counts, and when it is a later one
// the debt counts in the current cycle. The part of it not reported yet in the current cycle
// (field d:<replica> of the state) is taken from the fleet's budget, so that Redis's count and
// the local admissions add up.
//
// They return {code, wait, available, limit, seq, now, replicas, free}: code 1 granted (wait
// µs before use, 0 for now), 0 refused (wait: what it would have been), -1 invalid number of
// permits, -2 expired (the caller had given up by the time the script ran; nothing written);
// replicas the live replicas counting this one (0 when not asked); free the instant (µs,
// Redis's clock) one permission is free again (now when one is).
const acquirePrologue = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local deadline = tonumber(ARGV[5])
local n = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local limit = tonumber(redis.call('GET', KEYS[2]) or ARGV[3])
local replicas = 0
local stale = tonumber(ARGV[8])
if stale > 0 then
  replicas = redis.call('ZCOUNT', KEYS[3], string.format('%d', now - stale), '+inf')
  local mine = redis.call('ZSCORE', KEYS[3], ARGV[7])
  if not mine or tonumber(mine) < now - stale then replicas = replicas + 1 end
end
if deadline > 0 and now > deadline then
  return {-2, 0, 0, limit, 0, now, replicas, 0}
end
local cur = math.floor(now / period)
local held, heldNext, heldFar = 0, 0, 0
if KEYS[5] then
  -- promises: replica -> "cycle share", the last cycle in which that replica grants nothing
  -- locally and its share. A replica whose promise does not cover the current cycle may be
  -- deciding alone (an episode of its own), so its share is held back from everyone else;
  -- so are the shares of replicas the caller counts (ARGV[13]) that Redis has no record of
  -- (a Redis restarted empty).
  local mine = ARGV[7]
  local share = tonumber(ARGV[11] or '0')
  local keep = tonumber(ARGV[14] or '2')
  if ARGV[12] == '1' and deadline > 0 then
    redis.call('HSET', KEYS[5], mine, string.format('%d %d', cur + 1, share))
  end
  local known, heldKnown, heldKnownNext, heldKnownFar = 0, 0, 0, 0
  local all = redis.call('HGETALL', KEYS[5])
  for i = 1, #all, 2 do
    local pc, ps = string.match(all[i + 1], '^(%d+) (%-?%d+)$')
    pc = tonumber(pc)
    if pc < cur - keep then
      redis.call('HDEL', KEYS[5], all[i])
    elseif all[i] ~= mine then
      known = known + 1
      local s = math.max(tonumber(ps), share, 0)
      if pc < cur then heldKnown = heldKnown + s end
      if pc < cur + 1 then heldKnownNext = heldKnownNext + s end
      heldKnownFar = heldKnownFar + s
    end
  end
  redis.call('PEXPIRE', KEYS[5], string.format('%d', math.ceil((keep + 2) * period / 1000)))
  local others = math.max(tonumber(ARGV[13] or '0'), replicas) - 1
  local unknown = math.max(others - known, 0) * math.max(share, 0)
  held = heldKnown + unknown
  -- a reservation of the next cycle, or of a later one, holds back the shares of the
  -- replicas whose promise does not cover that cycle (beyond the next: every one)
  heldNext = heldKnownNext + unknown
  heldFar = heldKnownFar + unknown
end
if n < 1 or n > limit then
  return {-1, 0, 0, limit, 0, now, replicas, 0}
end
local id = ARGV[6]
local debtCycle = tonumber(ARGV[9])
local debt = tonumber(ARGV[10])
if debt > 0 and debtCycle < cur then
  -- the replica's estimate of Redis's clock lags: what it granted from debtCycle on, less
  -- a full share per cycle since, belongs to the current cycle (as its local share counts);
  -- a replica that sends no share (ARGV[11]) reports for its own cycle only
  local share = tonumber(ARGV[11] or '-1')
  if share < 0 then debt = 0 else debt = math.max(debt - (cur - debtCycle) * share, 0) end
end
local function newDebt(prev)
  if debt <= 0 then return 0 end
  if prev then
    local pc, pa = string.match(prev, '^(%d+) (%d+)$')
    if tonumber(pc) == cur then return math.max(debt - tonumber(pa), 0) end
  end
  return debt
end
`

// scriptCycles is Resilience4j's AtomicRateLimiter: cycles of ARGV[2] µs counted from the Unix
// epoch, permissions refreshed to min(p + elapsedCycles × limit, limit), a request for n
// reserved when its last permission's cycle begins within ARGV[4] µs.
var scriptCycles = redis.NewScript(acquirePrologue + `
local c = cur
local st = redis.call('HMGET', KEYS[1], 'c', 'p', 's', 'ic', 'd:' .. ARGV[7])
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
local function free()
  if p - held >= 1 then return now end
  local pr = p
  if p > 0 then pr = math.max(p - held, 0) end
  if pr + limit - heldNext >= 1 then return (c + 1) * period end
  return (c + math.max(2, math.ceil((1 + heldFar - pr) / limit))) * period
end
local ic = tonumber(st[4] or '-1')
if id ~= '' and ic == cur then
  local g = redis.call('HGET', KEYS[4], id)
  if g then
    local k = tonumber(string.match(g, '^(%d+)'))
    return {1, math.max(k * period - now, 0), p, limit, seq, now, replicas, free()}
  end
end
local d = newDebt(st[5])
local write = false
if d > 0 then
  p = p - d
  write = true
end
local code = 1
local wait = 0
local k = c
local q = p - held -- what this caller may take: the shares held back are not its
if q < n then
  -- A reservation of a later cycle takes what this caller may use of the current cycle (as
  -- Resilience4j's) and the rest from later cycles; the part of the leftover held back for
  -- others is given up, since p also counts the reservations and a leftover does not carry
  -- over: reservations counted against it would vanish at the refresh.
  -- The first later cycle j with pr + (j - c) * limit - held(j) >= n:
  local pr = p
  if p > 0 then pr = math.max(q, 0) end
  k = c + 1
  if pr + limit - heldNext < n then
    k = c + math.max(2, math.ceil((n + heldFar - pr) / limit))
    if limit - heldFar < n then k = c + 1 + math.ceil(tonumber(ARGV[4]) / period) + 1 end -- never
  end
  wait = math.max(k * period - now, 0)
  if wait > tonumber(ARGV[4]) then code = 0 else p = pr end
end
if code == 1 then
  p = p - n
  seq = seq + 1
  write = true
end
if write then
  redis.call('HSET', KEYS[1], 'c', string.format('%d', c), 'p', string.format('%d', p), 's', string.format('%d', seq), 'ic', string.format('%d', cur))
  if d > 0 then redis.call('HSET', KEYS[1], 'd:' .. ARGV[7], string.format('%d %d', cur, debt)) end
  local full = c + math.max(1, math.ceil((limit - p) / limit))
  redis.call('PEXPIREAT', KEYS[1], string.format('%d', math.ceil(full * period / 1000) + 1))
  if ic ~= cur then redis.call('DEL', KEYS[4]) end
end
if code == 1 and id ~= '' then
  redis.call('HSET', KEYS[4], id, string.format('%d %d', k, n))
  redis.call('PEXPIREAT', KEYS[4], string.format('%d', math.ceil((cur + 1) * period / 1000) + 1))
end
return {code, wait, p, limit, seq, now, replicas, free()}
`)

// scriptGCRA is the generic cell rate algorithm: one permission every period/limit µs
// (rounded up to a whole µs per request), a burst of limit permissions, tat the time at which
// the limiter would be empty of debt. KEYS and ARGV as scriptCycles; a grant's cycle in the ids
// hash is the one its wait ends in.
var scriptGCRA = redis.NewScript(acquirePrologue + `
local st = redis.call('HMGET', KEYS[1], 't', 's', 'ic', 'd:' .. ARGV[7])
local tat = now
local seq = 0
if st[1] then
  tat = math.max(tonumber(st[1]), now)
  seq = tonumber(st[2])
end
local one = math.ceil(period / limit)
local ic = tonumber(st[3] or '-1')
if id ~= '' and ic == cur then
  local g = redis.call('HGET', KEYS[4], id)
  if g then
    local avail = math.min(math.floor((period - (tat - now)) * limit / period), limit)
    return {1, 0, avail, limit, seq, now, replicas, math.max(tat + one - period, now)}
  end
end
local d = newDebt(st[4])
local write = false
if d > 0 then
  tat = tat + math.ceil(d * period / limit)
  write = true
end
local inc = math.ceil(n * period / limit)
local new = tat + inc
-- the shares held back count as taken for this caller, without being stored
local heldInc = math.ceil(held * period / limit)
local wait = math.max(new + heldInc - period - now, 0)
local avail = math.min(math.floor((period - (tat + heldInc - now)) * limit / period), limit)
local code = 1
if wait > tonumber(ARGV[4]) then code = 0 end
if code == 1 then
  tat = new
  avail = avail - n
  seq = seq + 1
  write = true
end
if write then
  redis.call('HSET', KEYS[1], 't', string.format('%d', tat), 's', string.format('%d', seq), 'ic', string.format('%d', cur))
  if d > 0 then redis.call('HSET', KEYS[1], 'd:' .. ARGV[7], string.format('%d %d', cur, debt)) end
  redis.call('PEXPIREAT', KEYS[1], string.format('%d', math.ceil(tat / 1000) + 1))
  if ic ~= cur then redis.call('DEL', KEYS[4]) end
end
if code == 1 and id ~= '' then
  redis.call('HSET', KEYS[4], id, string.format('%d %d', math.floor((now + wait) / period), n))
  redis.call('PEXPIREAT', KEYS[4], string.format('%d', math.ceil((cur + 1) * period / 1000) + 1))
end
return {code, wait, avail, limit, seq, now, replicas, math.max(tat + heldInc + one - period, now)}
`)

// scriptReclaim gives back the grants of the checks ARGV[4..] when they were made in the
// current cycle: checks whose answers never arrived (the caller was told "unavailable" and
// did not use them). KEYS as the acquire scripts; ARGV: period, default limit, algorithm (0
// cycles, 1 GCRA), ids. Returns the number of permissions given back.
var scriptReclaim = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local period = tonumber(ARGV[1])
local cur = math.floor(now / period)
local ic = redis.call('HGET', KEYS[1], 'ic')
if not ic or tonumber(ic) ~= cur then return 0 end
local limit = tonumber(redis.call('GET', KEYS[2]) or ARGV[2])
local back = 0
for i = 4, #ARGV do
  local g = redis.call('HGET', KEYS[4], ARGV[i])
  if g then
    redis.call('HDEL', KEYS[4], ARGV[i])
    local n = tonumber(string.match(g, ' (%d+)$'))
    back = back + n
    if ARGV[3] == '1' then
      redis.call('HINCRBY', KEYS[1], 't', -math.ceil(n * period / limit))
    else
      redis.call('HINCRBY', KEYS[1], 'p', n)
    end
  end
end
return back
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
// ARGV[2] µs, and returns {live replicas, limit, now} with ARGV[3] as the default limit. KEYS[1]
// is the replicas' sorted set, KEYS[2] the limit, KEYS[3] the promises (see the acquire
// scripts). With ARGV[5] = 1 it records the promise of the replica for the current and the next
// cycle of ARGV[4] µs, with its share ARGV[7], unless Redis runs it after the deadline ARGV[6]
// (then it writes nothing at all); promises older than ARGV[8] cycles are forgotten.
var scriptHeartbeat = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local deadline = tonumber(ARGV[6] or '0')
if deadline > 0 and now > deadline then
  return {0, 0, now}
end
local stale = tonumber(ARGV[2])
if KEYS[3] and ARGV[5] == '1' and deadline > 0 then
  local period = tonumber(ARGV[4])
  local cur = math.floor(now / period)
  redis.call('HSET', KEYS[3], ARGV[1], string.format('%d %d', cur + 1, tonumber(ARGV[7])))
  redis.call('PEXPIRE', KEYS[3], string.format('%d', math.ceil((tonumber(ARGV[8]) + 2) * period / 1000)))
end
redis.call('ZADD', KEYS[1], string.format('%d', now), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - stale))
redis.call('PEXPIRE', KEYS[1], string.format('%d', math.ceil(stale / 1000)))
local limit = tonumber(redis.call('GET', KEYS[2]) or ARGV[3])
return {redis.call('ZCARD', KEYS[1]), limit, now}
`)
