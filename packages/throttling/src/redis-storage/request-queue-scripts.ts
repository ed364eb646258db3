/**
 * The Lua scripts of {@link RedisRequestQueueClient}. Every change to a queue is one script, so it
 * is atomic however many processes share the queue, and every time it compares or stores is Redis
 * `TIME`: lock expiry never depends on a host's clock. KEYS are always the queue's six keys
 * (meta, data, order, locks, lockInfo, clients; one hash tag); a request is pending when it is in
 * `order`, in progress when in `locks`, handled when only in `data`.
 */

const PRELUDE = `
local meta, data, order, locks, lockinfo, clients = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
if redis.call('EXISTS', meta) == 0 then return redis.error_reply('ERR_QUEUE_NOT_FOUND') end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- Locks that expired go back to where they were in the queue.
local function reclaim()
  local expired = redis.call('ZRANGEBYSCORE', locks, '-inf', now)
  for _, id in ipairs(expired) do
    local info = redis.call('HGET', lockinfo, id) or ''
    redis.call('ZADD', order, tonumber(string.match(info, '^([^|]*)')) or now, id)
    redis.call('HDEL', lockinfo, id)
  end
  if #expired > 0 then redis.call('ZREMRANGEBYSCORE', locks, '-inf', now) end
end
-- The next place in the queue: after every other request, or before them (forefront).
local function place(forefront)
  local seq = redis.call('HINCRBY', meta, 'seq', 1)
  if forefront == '1' then return -seq end
  return seq
end
local function handled(id)
  return redis.call('ZSCORE', order, id) == false and redis.call('ZSCORE', locks, id) == false
end
local function touch(modified)
  redis.call('HSET', meta, 'accessedAt', now)
  if modified then redis.call('HSET', meta, 'modifiedAt', now) end
end
`;

/** ARGV: forefront ('1'/'0'), then id, json, handled ('1'/'0') per request. Answers [present, handled] per request. */
const ADD = `${PRELUDE}
local out = {}
local added = false
for i = 2, #ARGV, 3 do
  local id, json, isHandled = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if redis.call('HEXISTS', data, id) == 1 then
    out[#out + 1] = 1
    out[#out + 1] = handled(id) and 1 or 0
  else
    redis.call('HSET', data, id, json)
    if isHandled ~= '1' then redis.call('ZADD', order, place(ARGV[1]), id) end
    out[#out + 1] = 0
    out[#out + 1] = 0
    added = true
  end
end
touch(added)
return out
`;

/** ARGV: id, json, handled, forefront. Answers [present, wasHandled]; a request not there is added. */
const UPDATE = `${PRELUDE}
local id, json, isHandled, forefront = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
touch(true)
if redis.call('HEXISTS', data, id) == 0 then
  redis.call('HSET', data, id, json)
  if isHandled ~= '1' then redis.call('ZADD', order, place(forefront), id) end
  return {0, 0}
end
local wasHandled = handled(id)
redis.call('HSET', data, id, json)
if isHandled == '1' then
  redis.call('ZREM', order, id)
  redis.call('ZREM', locks, id)
  redis.call('HDEL', lockinfo, id)
elseif wasHandled or (forefront == '1' and redis.call('ZSCORE', order, id)) then
  redis.call('ZADD', order, place(forefront), id)
elseif forefront == '1' then
  -- Locked: it stays locked, and goes to the front when released.
  local owner = string.match(redis.call('HGET', lockinfo, id) or '', '|(.*)$') or ''
  redis.call('HSET', lockinfo, id, place('1') .. '|' .. owner)
end
return {1, wasHandled and 1 or 0}
`;

/**
 * ARGV: limit, lock ms, client key. Locks the first pending requests for the caller: at most
 * `limit`, and at most its fair share when other clients consume the queue (see fairShare).
 * Answers [lock expiry, queue has locked requests (0/1), json...].
 */
const LIST_AND_LOCK = `${PRELUDE}
reclaim()
local limit, lockMs, client = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local expiry = now + lockMs
-- A client consumes the queue while the locks of its latest call (or prolonging) may still be held:
-- the clients set scores each by that expiry, so a client that stops calling stops counting when its
-- locks lapse.
-- The caller locks its share of what is outstanding (pending and locked, over the consumers) less
-- what it holds already, and at least one request: a client that took a queue's head before the
-- others came leaves them the rest. Alone, it takes the whole limit without scanning the locks.
local function fairShare()
  redis.call('ZREMRANGEBYSCORE', clients, '-inf', now)
  redis.call('ZADD', clients, expiry, client)
  local active = redis.call('ZCARD', clients)
  if active == 1 then return limit end
  local held, mine = redis.call('HVALS', lockinfo), 0
  for _, info in ipairs(held) do
    if string.match(info, '|(.*)$') == client then mine = mine + 1 end
  end
  local share = math.ceil((redis.call('ZCARD', order) + #held) / active) - mine
  return math.min(limit, math.max(1, share))
end
local head = redis.call('ZRANGE', order, 0, fairShare() - 1, 'WITHSCORES')
local out = {expiry, 0}
for i = 1, #head, 2 do
  local id = head[i]
  redis.call('ZREM', order, id)
  redis.call('ZADD', locks, expiry, id)
  redis.call('HSET', lockinfo, id, head[i + 1] .. '|' .. client)
  out[#out + 1] = redis.call('HGET', data, id)
end
out[2] = redis.call('ZCARD', locks) > 0 and 1 or 0
-- Nothing locked for the caller: out[1] says in how many ms the earliest lock expires instead.
if #head == 0 and out[2] == 1 then
  out[1] = tonumber(redis.call('ZRANGE', locks, 0, 0, 'WITHSCORES')[2]) - now
end
touch(#head > 0)
return out
`;

/**
 * ARGV: id, lock ms, forefront, client key. Extends the caller's lock (or locks a pending request
 * whose lock lapsed). Answers the new expiry; an error when another client holds it or it is handled.
 */
const PROLONG = `${PRELUDE}
local id, lockMs, forefront, client = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
if redis.call('HEXISTS', data, id) == 0 then return redis.error_reply('ERR_REQUEST_NOT_FOUND') end
local lockedUntil = redis.call('ZSCORE', locks, id)
local at
if lockedUntil then
  local info = redis.call('HGET', lockinfo, id) or ''
  local owner = string.match(info, '|(.*)$') or ''
  if owner ~= client and tonumber(lockedUntil) > now then return redis.error_reply('ERR_LOCKED_BY_ANOTHER_CLIENT') end
  at = tonumber(string.match(info, '^([^|]*)')) or now
else
  at = redis.call('ZSCORE', order, id)
  if not at then return redis.error_reply('ERR_REQUEST_HANDLED') end
  redis.call('ZREM', order, id)
end
if forefront == '1' then at = place('1') end
local expiry = now + lockMs
redis.call('ZADD', locks, expiry, id)
redis.call('HSET', lockinfo, id, at .. '|' .. client)
-- Holding a lock is consuming the queue: the caller keeps counting in the fair share until it lapses.
local counted = redis.call('ZSCORE', clients, client)
if not counted or tonumber(counted) < expiry then redis.call('ZADD', clients, expiry, client) end
touch(false)
return expiry
`;

/** ARGV: id, forefront, client key. Puts a locked request back where it was (or at the front). */
const DELETE_LOCK = `${PRELUDE}
local id, forefront, client = ARGV[1], ARGV[2], ARGV[3]
local lockedUntil = redis.call('ZSCORE', locks, id)
if not lockedUntil then return redis.error_reply('ERR_REQUEST_NOT_LOCKED') end
local info = redis.call('HGET', lockinfo, id) or ''
local owner = string.match(info, '|(.*)$') or ''
if owner ~= client and tonumber(lockedUntil) > now then return redis.error_reply('ERR_LOCKED_BY_ANOTHER_CLIENT') end
redis.call('ZREM', locks, id)
redis.call('HDEL', lockinfo, id)
local at = tonumber(string.match(info, '^([^|]*)')) or place('0')
if forefront == '1' then at = place('1') end
redis.call('ZADD', order, at, id)
touch(true)
return 1
`;

/** ARGV: id. Removes a request whatever its state. */
const DELETE_REQUEST = `${PRELUDE}
local id = ARGV[1]
local removed = redis.call('HDEL', data, ARGV[1])
redis.call('ZREM', order, id)
redis.call('ZREM', locks, id)
redis.call('HDEL', lockinfo, id)
touch(removed > 0)
return removed
`;

/**
 * ARGV: limit. The first `limit` requests not handled, locked ones included, in queue order (read
 * only, as memory-storage's listHead). Answers [queue has locked requests, json...].
 */
const LIST_HEAD = `${PRELUDE}
local limit = tonumber(ARGV[1])
local picked = {}
local head = redis.call('ZRANGE', order, 0, limit - 1, 'WITHSCORES')
for i = 1, #head, 2 do picked[#picked + 1] = {tonumber(head[i + 1]), head[i]} end
local held = redis.call('HGETALL', lockinfo)
for i = 1, #held, 2 do
  picked[#picked + 1] = {tonumber(string.match(held[i + 1], '^([^|]*)')) or 0, held[i]}
end
table.sort(picked, function(a, b) return a[1] < b[1] end)
local out = {redis.call('ZCARD', locks) > 0 and 1 or 0}
for i = 1, math.min(limit, #picked) do out[#out + 1] = redis.call('HGET', data, picked[i][2]) end
touch(false)
return out
`;

/** No ARGV. Answers [total, pending, locked, created, modified, accessed, name]. */
const INFO = `${PRELUDE}
reclaim()
touch(false)
local m = redis.call('HMGET', meta, 'createdAt', 'modifiedAt', 'accessedAt', 'name')
return {redis.call('HLEN', data), redis.call('ZCARD', order) + redis.call('ZCARD', locks), redis.call('ZCARD', locks),
  m[1], m[2], m[3], m[4]}
`;

/** The scripts by ioredis command name; each takes the queue's six keys. */
export const REQUEST_QUEUE_SCRIPTS = {
    crawleeRqAdd: ADD,
    crawleeRqUpdate: UPDATE,
    crawleeRqListAndLock: LIST_AND_LOCK,
    crawleeRqProlong: PROLONG,
    crawleeRqDeleteLock: DELETE_LOCK,
    crawleeRqDeleteRequest: DELETE_REQUEST,
    crawleeRqListHead: LIST_HEAD,
    crawleeRqInfo: INFO,
} as const;

export type RequestQueueScript = keyof typeof REQUEST_QUEUE_SCRIPTS;

/** Keys each queue script takes. */
export const REQUEST_QUEUE_SCRIPT_KEYS = 6;
