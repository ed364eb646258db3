import type { Redis } from 'ioredis';

import { RedisDomainClock } from 'crawlee-throttling/redis';
import type { Clock } from 'crawlee-throttling';
import { REDIS_URL, deletePrefix, testRedis, uniquePrefix } from './redis';

/** A host whose clock runs `offsetMs` off the real one (hosts' clocks differ; Redis TIME decides). */
export const skewed = (offsetMs: number): Clock => ({ now: () => Date.now() + offsetMs });

/** What a block of Redis clock tests works with; `prefix` and `redis` are read inside a test. */
export interface RedisClockHosts {
    /** A clock under this test's prefix, on a host whose clock runs `offsetMs` off the real one. */
    host(offsetMs?: number, idleTtlMs?: number): RedisDomainClock;
    /** Closes `clock` after the test, with the clocks `host()` made. */
    track(clock: RedisDomainClock): RedisDomainClock;
    /** This test's key prefix, new for each test. */
    readonly prefix: string;
    /** A plain connection to the test Redis, for checks. */
    readonly redis: Redis;
}

/**
 * Sets up a block of tests against the test Redis (call it inside `describeRedis`): a fresh key
 * prefix per test, every clock made closed and every key under the prefix deleted after it.
 */
export function redisClockHosts(label: string): RedisClockHosts {
    let redis: Redis;
    let prefix: string;
    const clocks: RedisDomainClock[] = [];
    const track = (clock: RedisDomainClock) => {
        clocks.push(clock);
        return clock;
    };
    beforeAll(() => {
        redis = testRedis();
    });
    beforeEach(() => {
        prefix = uniquePrefix(label);
    });
    afterEach(async () => {
        await Promise.all(clocks.splice(0).map((c) => c.close()));
        await deletePrefix(redis, prefix);
    });
    afterAll(async () => {
        await redis.quit();
    });
    return {
        host: (offsetMs = 0, idleTtlMs?: number) =>
            track(new RedisDomainClock({ url: REDIS_URL, keyPrefix: prefix, clock: skewed(offsetMs), idleTtlMs })),
        track,
        get prefix() {
            return prefix;
        },
        get redis() {
            return redis;
        },
    };
}
