import type { Cluster, Redis } from 'ioredis';
import { z } from 'zod';

import type { Clock } from '../core/clock';
import { systemClock } from '../core/clock';
import { ThrottlingOptionsError } from '../core/errors';
import { formatOptionIssues } from '../options/options-schema';
import { failFast } from '../shared-clock/redis-clock-options';
import { loadIoredis } from '../shared-clock/load-ioredis';

/** An ioredis connection: one server (`Redis`) or a `Cluster`. */
export type RedisStorageConnection = Redis | Cluster;

/** Options of {@link RedisStorageClient}: give `url` or `client`, not both. */
export interface RedisStorageClientOptions {
    /**
     * Where Redis listens (`redis://[user:password@]host:port[/db]`, `rediss://` for TLS). The
     * client opens its own connection and closes it on `teardown()`.
     * @default 'redis://127.0.0.1:6379'
     */
    url?: string;
    /** An ioredis `Redis` or `Cluster` connection to use instead; `teardown()` leaves it open. */
    client?: RedisStorageConnection;
    /**
     * Put at the front of every key, inside the hash tag: crawls (or tests) with different
     * prefixes share one Redis without seeing each other's storages. No `{` or `}`; colons at the
     * end are dropped (keys are `{<prefix>:<kind>:<id>}:<part>`).
     * @default 'crawlee'
     */
    prefix?: string;
    /**
     * With `url`: how long a call may wait on Redis (connecting, or the answer) before it fails.
     * @default 5000
     */
    timeoutMs?: number;
    /**
     * How long a storage call waits for Redis to come back when the connection drops or Redis
     * restarts: the call is made again once ioredis has reconnected, until this long after its
     * first attempt, and then fails with a RedisUnavailableError (a Crawlee `CriticalError`: the crawl ends). 0 fails at the first lost connection.
     * @default 30000
     */
    outageMs?: number;
    /**
     * Most requests one `listAndLockHead` locks for its caller (Crawlee's queue asks for 25). While
     * other clients consume the same queue, a call locks at most its caller's fair share of the
     * queue's outstanding requests anyway; lower costs one round trip per request fetched.
     * @default 25
     */
    lockLimit?: number;
    /**
     * This process's time, for how long a call waits on an outage and between idle polls (every
     * lock is decided on Redis `TIME`).
     * @default the system clock
     */
    clock?: Clock;
}

export const redisStorageOptionsSchema = z.strictObject({
    url: z
        .string()
        .regex(/^rediss?:\/\/./, 'must be a redis:// or rediss:// URL')
        .optional(),
    client: z
        .custom<RedisStorageConnection>(
            (value) => typeof (value as { defineCommand?: unknown } | null)?.defineCommand === 'function',
            'must be an ioredis Redis or Cluster connection (it has no defineCommand)',
        )
        .optional(),
    prefix: z
        .string()
        .min(1, 'must not be empty')
        .regex(/^[^{}]*[^{}:]:*$/, 'must contain something besides colons, and no { or } (they delimit the hash tag)')
        .optional(),
    timeoutMs: z.number().positive('must be a number of ms > 0').finite().optional(),
    outageMs: z.number().min(0, 'must be a number of ms >= 0').finite('must be a finite number of ms').optional(),
    lockLimit: z
        .number()
        .int('must be a whole number')
        .min(1, 'must be from 1 to 25')
        .max(25, 'must be from 1 to 25')
        .optional(),
    clock: z
        .custom<Clock>(
            (value) => typeof (value as { now?: unknown } | null)?.now === 'function',
            'must be a clock: an object with now() answering epoch ms',
        )
        .optional(),
});

/** The options after defaults, with the connection made. */
export interface ResolvedRedisStorageOptions {
    connection: RedisStorageConnection;
    ownsConnection: boolean;
    prefix: string;
    lockLimit: number;
    outageMs: number;
    clock: Clock;
}

/** Checks the options (naming the bad one and what it allows) and opens the connection. */
export function resolveRedisStorageOptions(options: RedisStorageClientOptions): ResolvedRedisStorageOptions {
    const parsed = redisStorageOptionsSchema.safeParse(options ?? {});
    if (!parsed.success) throw new ThrottlingOptionsError(formatOptionIssues('RedisStorageClient', parsed.error));
    const {
        url,
        client,
        prefix: given = 'crawlee',
        timeoutMs = 5_000,
        lockLimit = 25,
        outageMs = 30_000,
        clock = systemClock,
    } = parsed.data;
    if (url !== undefined && client !== undefined)
        throw new ThrottlingOptionsError('Invalid RedisStorageClient options: give either `url` or `client`, not both');
    const prefix = given.replace(/:+$/, '');
    if (client) return { connection: client, ownsConnection: false, prefix, lockLimit, outageMs, clock };
    const { Redis: RedisClass } = loadIoredis();
    return {
        connection: new RedisClass(url ?? 'redis://127.0.0.1:6379', failFast(timeoutMs)),
        ownsConnection: true,
        prefix,
        lockLimit,
        outageMs,
        clock,
    };
}
