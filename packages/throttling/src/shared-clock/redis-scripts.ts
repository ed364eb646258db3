/**
 * The Lua scripts of {@link RedisDomainClock}. Each decision is one script, so it runs atomically
 * on the Redis server, and takes its time from Redis `TIME`: hosts pass durations relative to their
 * own clock (deltas), never their clock itself, so hosts whose clocks differ still agree.
 *
 * Every script takes `ARGV[1]` = idle TTL in ms, and answers `{ flag, redisNow, ... }` so the caller
 * can turn Redis times back into its own time (`hostNow + (redisTime - redisNow)`). Times stored and
 * returned are Redis epoch milliseconds; every number fits `%.14g` (13 digits) so Lua's number
 * formatting never rounds them.
 */

// Effects replication (TIME before a write) is the default from Redis 5; older servers need the call.
const PRELUDE = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local function num(v) return tonumber(v) or 0 end
local function keep(key, latest) redis.call('PEXPIRE', key, math.max(latest - now, 0) + ttl) end
`;

/**
 * Reserves the next dispatch of one key. KEYS: clock, rate. ARGV[2]: the wanted next dispatch, as a
 * delta from now. Grants when both clocks have passed, then arms `next` (never earlier than it was).
 * Either way it reads the key's tally and rate (as TALLY, adding nothing). Answers
 * `{1, now, armed, previous, ...tally}` or `{0, now, notBefore, 0, ...tally}`, where tally is
 * `tallied, dispatched, answered, found, rate, at` (tallied 0: no host tallied the key; found 0: no
 * rate shared, rate and at then 0).
 */
export const RESERVE = `${PRELUDE}
local c = redis.call('HMGET', KEYS[1], 'next', 'backoff', 'decay')
local nextAt, backoff, decay = num(c[1]), num(c[2]), num(c[3])
local r = redis.call('HMGET', KEYS[2], 'dispatched', 'answered', 'rate', 'at')
local tally = {r[1] and 1 or 0, num(r[1]), num(r[2]), r[3] and 1 or 0, r[3] or 0, num(r[4])}
local notBefore = math.max(nextAt, backoff)
if notBefore > now then return {0, now, notBefore, 0, unpack(tally)} end
local armed = math.max(nextAt, now + tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], 'next', armed)
keep(KEYS[1], math.max(armed, backoff, decay))
return {1, now, armed, nextAt, unpack(tally)}
`;

/**
 * Reserves several keys all-or-nothing (one request's scopes). KEYS: their clocks. ARGV[2..]: the
 * delta of each. Answers `{1, now, armed1, armed2, ...}` or `{0, now, latest notBefore}`.
 */
export const RESERVE_MANY = `${PRELUDE}
local rows, worst = {}, 0
for i, key in ipairs(KEYS) do
  local c = redis.call('HMGET', key, 'next', 'backoff', 'decay')
  rows[i] = {num(c[1]), num(c[2]), num(c[3])}
  worst = math.max(worst, rows[i][1], rows[i][2])
end
if worst > now then return {0, now, worst} end
local out = {1, now}
for i, key in ipairs(KEYS) do
  local armed = math.max(rows[i][1], now + tonumber(ARGV[i + 1]))
  redis.call('HSET', key, 'next', armed)
  keep(key, math.max(armed, rows[i][2], rows[i][3]))
  out[i + 2] = armed
end
return out
`;

/**
 * Moves the clocks forward to at least the given times (the largest wait wins). KEYS: clock.
 * ARGV[2], ARGV[3]: deltas of next and backoff, or '' to leave one alone. Answers `{1, now, next, backoff}`.
 */
export const EXTEND = `${PRELUDE}
local c = redis.call('HMGET', KEYS[1], 'next', 'backoff', 'decay')
local n, b = num(c[1]), num(c[2])
if ARGV[2] ~= '' then n = math.max(n, now + tonumber(ARGV[2])) end
if ARGV[3] ~= '' then b = math.max(b, now + tonumber(ARGV[3])) end
if n ~= num(c[1]) or b ~= num(c[2]) then
  redis.call('HSET', KEYS[1], 'next', n, 'backoff', b)
  keep(KEYS[1], math.max(n, b, num(c[3])))
end
return {1, now, n, b}
`;

/**
 * Ends a lease (as decideSettlement): if `next` is still the lease (ARGV[2], Redis time, or '' when
 * unknown), it becomes the new value (earlier or later); otherwise it only moves forward. ARGV[3] is
 * the new value: a delta from now when ARGV[4] is 'rel', a Redis time when 'abs' (undoing a
 * reservation). Answers `{1, now, next}`.
 */
export const SETTLE = `${PRELUDE}
local c = redis.call('HMGET', KEYS[1], 'next', 'backoff', 'decay')
local current = num(c[1])
local target = tonumber(ARGV[3])
if ARGV[4] == 'rel' then target = now + target end
local n = math.max(current, target)
if ARGV[2] ~= '' and current == tonumber(ARGV[2]) then n = target end
if n ~= current then
  redis.call('HSET', KEYS[1], 'next', n)
  keep(KEYS[1], math.max(n, num(c[2]), num(c[3])))
end
return {1, now, n}
`;

/**
 * Records a refusal for every host at once. While the shared backoff runs nothing escalates (a
 * burst of refusals, on any host, counts once) and a server wait (ARGV[2], or '') may only
 * lengthen it (the quiet period that resets the level moves with its end). Otherwise the level rises by one (back to 1 after a quiet period, `decay`) and the
 * backoff becomes the server wait or base × factor^(level-1), capped. ARGV[3..6]: base, max, factor,
 * highest level. Answers `{escalated, now, backoff, level, delay}`.
 */
export const RECORD_REFUSAL = `${PRELUDE}
local c = redis.call('HMGET', KEYS[1], 'next', 'backoff', 'level', 'decay')
local n, b, level, decay = num(c[1]), num(c[2]), num(c[3]), num(c[4])
local maxMs = tonumber(ARGV[4])
if b > now then
  if ARGV[2] ~= '' then
    local longer = math.max(b, now + math.min(tonumber(ARGV[2]), maxMs))
    if longer > b then
      decay = decay + (longer - b)
      b = longer
      redis.call('HSET', KEYS[1], 'backoff', b, 'decay', decay)
      keep(KEYS[1], math.max(n, b, decay))
    end
  end
  return {0, now, b, level, b - now}
end
if decay ~= 0 and now >= decay then level = 0 end
level = math.min(level + 1, tonumber(ARGV[6]))
local delay
if ARGV[2] ~= '' then delay = tonumber(ARGV[2]) else delay = tonumber(ARGV[3]) * tonumber(ARGV[5]) ^ (level - 1) end
delay = math.ceil(math.min(delay, maxMs))
b = now + delay
decay = math.max(b, n) + delay
redis.call('HSET', KEYS[1], 'backoff', b, 'level', level, 'decay', decay)
keep(KEYS[1], math.max(n, decay))
return {1, now, b, level, delay}
`;

/**
 * Takes a concurrency slot: leases that ran out are dropped first, so a dead host's slot frees
 * itself. KEYS: slots. ARGV[2..4]: limit, lease length, token. Answers `{1, now, expiresAt, held}`
 * or `{0, now, earliest expiry, held}`.
 */
export const ACQUIRE_SLOT = `${PRELUDE}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[2]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, now, tonumber(first[2]), held}
end
local expires = now + tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], expires, ARGV[4])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
keep(KEYS[1], tonumber(last[2]))
return {1, now, expires, held + 1}
`;

/** Extends a lease still held. KEYS: slots. ARGV[2..3]: lease length, token. Answers `{held, now, expiresAt}`. */
export const RENEW_SLOT = `${PRELUDE}
local score = redis.call('ZSCORE', KEYS[1], ARGV[3])
if not score or tonumber(score) <= now then return {0, now, 0} end
local expires = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], 'XX', expires, ARGV[3])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
keep(KEYS[1], tonumber(last[2]))
return {1, now, expires}
`;

/** Gives a slot back. KEYS: slots. ARGV[2]: token. Answers `{removed, now}`. */
export const RELEASE_SLOT = `${PRELUDE}
local removed = redis.call('ZREM', KEYS[1], ARGV[2])
return {removed, now}
`;

/**
 * Spends `cost` of a quota in the window (aligned to Redis time) holding now, all-or-nothing: an
 * empty window takes any cost (one oversized request still goes, alone), otherwise the spend must
 * stay within the limit. KEYS: quota. ARGV[2..4]: cost, limit, window length. Answers
 * `{granted, now, windowEnd, spent}` with `spent` as a string (costs may be fractional).
 */
export const SPEND_QUOTA = `${PRELUDE}
local windowMs = tonumber(ARGV[4])
local window = math.floor(now / windowMs) * windowMs
local q = redis.call('HMGET', KEYS[1], 'window', 'spent')
local spent = 0
if num(q[1]) == window then spent = num(q[2]) end
local ends = window + windowMs
local cost = tonumber(ARGV[2])
if spent ~= 0 and spent + cost > tonumber(ARGV[3]) then return {0, now, ends, tostring(spent)} end
spent = spent + cost
redis.call('HSET', KEYS[1], 'window', window, 'spent', spent)
keep(KEYS[1], ends)
return {1, now, ends, tostring(spent)}
`;

/**
 * Corrects a spend (the real cost minus the estimate) while the window it was made in is the one
 * kept; never below 0. KEYS: quota. ARGV[2..4]: delta, window length, when it was spent (a delta from
 * now). Answers `{1, now, spent}` (`spent` as a string; 0 when a later window replaced it).
 */
export const ADJUST_QUOTA = `${PRELUDE}
local windowMs = tonumber(ARGV[3])
local window = math.floor((now + tonumber(ARGV[4])) / windowMs) * windowMs
local q = redis.call('HMGET', KEYS[1], 'window', 'spent')
if num(q[1]) ~= window then return {1, now, '0'} end
local spent = math.max(0, num(q[2]) + tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], 'spent', spent)
keep(KEYS[1], window + windowMs)
return {1, now, tostring(spent)}
`;

/**
 * Offers a learned rate: it replaces the stored one unless that was learned later (or at the same
 * time and is lower). The key expires the idle TTL after the latest offer. KEYS: rate. ARGV[2]: the
 * rate (its exact text), ARGV[3]: when it was learned (a delta from now). Answers `{1, now, rate, at}`
 * of the rate in force, the rate as its text.
 */
export const SHARE_RATE = `${PRELUDE}
local at = now + tonumber(ARGV[3])
local c = redis.call('HMGET', KEYS[1], 'rate', 'at')
local keep = c[1] and (tonumber(c[2]) > at or (tonumber(c[2]) == at and tonumber(c[1]) <= tonumber(ARGV[2])))
if keep then
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {1, now, c[1], tonumber(c[2])}
end
redis.call('HSET', KEYS[1], 'rate', ARGV[2], 'at', at)
redis.call('PEXPIRE', KEYS[1], ttl)
return {1, now, ARGV[2], at}
`;

/** Reads the shared rate. KEYS: rate. Answers `{1, now, rate, at}`, or `{0, now}` when none. */
export const READ_RATE = `${PRELUDE}
local c = redis.call('HMGET', KEYS[1], 'rate', 'at')
if not c[1] then return {0, now} end
return {1, now, c[1], tonumber(c[2])}
`;

/**
 * Adds a host's counts to the key's (`dispatched`, `answered`, in the rate's hash) and answers the
 * totals with the rate in force. KEYS: rate. ARGV[2], ARGV[3]: the counts to add. Answers
 * `{1, now, dispatched, answered, found, rate, at}` (`found` 0: no rate shared).
 */
export const TALLY = `${PRELUDE}
local d = redis.call('HINCRBY', KEYS[1], 'dispatched', ARGV[2])
local a = redis.call('HINCRBY', KEYS[1], 'answered', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl)
local c = redis.call('HMGET', KEYS[1], 'rate', 'at')
if not c[1] then return {1, now, d, a, 0} end
return {1, now, d, a, 1, c[1], tonumber(c[2])}
`;

/** Reads the clocks (reports, tests). KEYS: clock. Answers `{1, now, next, backoff, level, decay}`. */
export const READ = `${PRELUDE}
local c = redis.call('HMGET', KEYS[1], 'next', 'backoff', 'level', 'decay')
return {1, now, num(c[1]), num(c[2]), num(c[3]), num(c[4])}
`;

/** The scripts under the command names they are defined as on the client. */
export const REDIS_CLOCK_SCRIPTS = {
    crawleeThrottlingReserve: { numberOfKeys: 2, lua: RESERVE },
    crawleeThrottlingReserveMany: { numberOfKeys: undefined, lua: RESERVE_MANY },
    crawleeThrottlingExtend: { numberOfKeys: 1, lua: EXTEND },
    crawleeThrottlingSettle: { numberOfKeys: 1, lua: SETTLE },
    crawleeThrottlingRecordRefusal: { numberOfKeys: 1, lua: RECORD_REFUSAL },
    crawleeThrottlingAcquireSlot: { numberOfKeys: 1, lua: ACQUIRE_SLOT },
    crawleeThrottlingRenewSlot: { numberOfKeys: 1, lua: RENEW_SLOT },
    crawleeThrottlingReleaseSlot: { numberOfKeys: 1, lua: RELEASE_SLOT },
    crawleeThrottlingSpendQuota: { numberOfKeys: 1, lua: SPEND_QUOTA },
    crawleeThrottlingAdjustQuota: { numberOfKeys: 1, lua: ADJUST_QUOTA },
    crawleeThrottlingShareRate: { numberOfKeys: 1, lua: SHARE_RATE },
    crawleeThrottlingReadRate: { numberOfKeys: 1, lua: READ_RATE },
    crawleeThrottlingTally: { numberOfKeys: 1, lua: TALLY },
    crawleeThrottlingRead: { numberOfKeys: 1, lua: READ },
} as const;

/** The name of one of {@link REDIS_CLOCK_SCRIPTS}. */
export type RedisClockScript = keyof typeof REDIS_CLOCK_SCRIPTS;
