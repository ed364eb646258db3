import type { Cluster, Redis, RedisOptions } from 'ioredis';

import type { Clock } from '../core/clock';
import { systemClock } from '../core/clock';
import { ThrottlingOptionsError } from '../core/errors';
import { loadIoredis } from './load-ioredis';

/** An ioredis connection: a single server (`Redis`) or a `Cluster`. */
export type RedisClockClient = Redis | Cluster;

/** Options of {@link RedisDomainClock}. */
export interface RedisDomainClockOptions {
    /**
     * Where Redis listens (`redis://[user:password@]host:port[/db]`, or `rediss://` for TLS). The
     * clock opens its own connection, set to fail a call within about `timeoutMs` when Redis is down,
     * and closes it on `close()`. Give either `url` or `client`.
     * @default 'redis://127.0.0.1:6379'
     */
    url?: string;
    /**
     * An ioredis `Redis` or `Cluster` connection to use instead of opening one: its own options
     * (timeouts, retries, TLS) apply, and `close()` leaves it open.
     */
    client?: RedisClockClient;
    /**
     * Put before every key, inside the hash tag, so several crawls (or tests) share one Redis
     * without sharing clocks. No `{` or `}`.
     * @default 'crawlee-throttling:'
     */
    keyPrefix?: string;
    /**
     * A key's data is dropped this long after its latest clock has passed (PEXPIRE): an idle domain
     * leaves nothing behind.
     * @default 600000 (10 minutes)
     */
    idleTtlMs?: number;
    /**
     * With `url`: how long a call may wait on Redis (connecting, or the answer) before it fails.
     * @default 1500
     */
    timeoutMs?: number;
    /**
     * This host's time, for the calls that take no `now` (extend, settle, refusals, slots, quotas):
     * times passed in and answered are this clock's, turned into durations for Redis.
     * @default the system clock
     */
    clock?: Clock;
}

/** Options after defaults, with the connection made. */
export interface ResolvedRedisClockOptions {
    client: RedisClockClient;
    ownsClient: boolean;
    keyPrefix: string;
    idleTtlMs: number;
    clock: Clock;
}

const DEFAULT_URL = 'redis://127.0.0.1:6379';

function fail(message: string): never {
    throw new ThrottlingOptionsError(`RedisDomainClock: ${message}`);
}

/** Checks the options (a message naming the option and what it allows) and opens the connection. */
export function resolveRedisClockOptions(options: RedisDomainClockOptions): ResolvedRedisClockOptions {
    if (typeof options !== 'object' || options === null) fail(`options must be an object, got ${String(options)}`);
    const { url, client, keyPrefix = 'crawlee-throttling:', idleTtlMs = 600_000, timeoutMs = 1_500 } = options;
    const { clock = systemClock } = options;
    if (url !== undefined && client !== undefined) fail('give either url or client, not both');
    if (url !== undefined && (typeof url !== 'string' || !/^rediss?:\/\/./.test(url)))
        fail(`url must be a redis:// or rediss:// URL, got ${JSON.stringify(url)}`);
    if (client !== undefined && typeof (client as { defineCommand?: unknown }).defineCommand !== 'function')
        fail('client must be an ioredis Redis or Cluster connection (it has no defineCommand)');
    if (typeof keyPrefix !== 'string' || /[{}]/.test(keyPrefix))
        fail(`keyPrefix must be a string without { or } (they delimit the hash tag), got ${JSON.stringify(keyPrefix)}`);
    if (!(Number.isFinite(idleTtlMs) && idleTtlMs >= 1_000))
        fail(`idleTtlMs must be a number of ms >= 1000, got ${String(idleTtlMs)}`);
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0))
        fail(`timeoutMs must be a number of ms > 0, got ${String(timeoutMs)}`);
    if (typeof clock?.now !== 'function') fail('clock must have a now() method');
    return {
        client: client ?? new (loadIoredis().Redis)(url ?? DEFAULT_URL, failFast(timeoutMs)),
        ownsClient: client === undefined,
        keyPrefix,
        idleTtlMs: Math.round(idleTtlMs),
        clock,
    };
}

/**
 * ioredis options under which a dead or silent Redis fails a call within about `timeoutMs`, rather
 * than queueing it through reconnects for ever: a dispatch waiting on the clock must learn it.
 */
export function failFast(timeoutMs: number): RedisOptions {
    return {
        connectTimeout: timeoutMs,
        commandTimeout: timeoutMs,
        // Calls made while (re)connecting wait for the connection, one retry at most.
        enableOfflineQueue: true,
        maxRetriesPerRequest: 1,
        retryStrategy: (times) => Math.min(times * 100, 1_000),
        // A script error is not worth resending; a lost connection is, once.
        autoResendUnfulfilledCommands: false,
        lazyConnect: false,
        // After QUIT (or on a dead socket) a close that does not come within this is forced.
        disconnectTimeout: 200,
    };
}
