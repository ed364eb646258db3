import { ThrottlingOptionsError } from 'crawlee-throttling';
import { RedisDomainClock } from 'crawlee-throttling/redis';
import { clusterHashTag } from '../../packages/throttling/src/shared-clock/redis-keys';
import { REDIS_URL, describeRedis } from '../helpers/redis';
import { redisClockHosts } from '../helpers/redis-clock-hosts';

/** Slack for the time a call takes on a busy machine. */
const SLACK = 250;

describe('RedisDomainClock options', () => {
    it('names the bad option and what it allows', () => {
        expect(() => new RedisDomainClock({ url: 'http://x' })).toThrow(
            /RedisDomainClock: url must be a redis:\/\/ or rediss:\/\/ URL, got "http:\/\/x"/,
        );
        expect(() => new RedisDomainClock({ keyPrefix: 'a{b}' })).toThrow(ThrottlingOptionsError);
        expect(() => new RedisDomainClock({ keyPrefix: 'a{b}' })).toThrow(
            /keyPrefix must be a string without \{ or \}/,
        );
        expect(() => new RedisDomainClock({ idleTtlMs: 0 })).toThrow(/idleTtlMs must be a number of ms >= 1000, got 0/);
        expect(() => new RedisDomainClock({ timeoutMs: -1 })).toThrow(/timeoutMs must be a number of ms > 0/);
        expect(() => new RedisDomainClock({ client: {} as never })).toThrow(/client must be an ioredis/);
        expect(() => new RedisDomainClock({ url: REDIS_URL, client: {} as never })).toThrow(/either url or client/);
    });
});

describeRedis('RedisDomainClock against Redis', () => {
    const hosts = redisClockHosts('clock');
    const { host } = hosts;

    it('grants a free key, refuses it to another host until the armed time, then grants again', async () => {
        const [a, b] = [host(), host()];
        const now = Date.now();
        await expect(a.reserve('a.com', now, now + 60_000)).resolves.toEqual({ granted: true });
        const refused = await b.reserve('a.com', Date.now(), Date.now() + 60_000);
        expect(refused.granted).toBe(false);
        expect(!refused.granted && refused.notBefore - now).toBeGreaterThan(60_000 - SLACK);
        expect(!refused.granted && refused.notBefore - now).toBeLessThan(60_000 + SLACK);
        await expect(b.reserve('b.com', Date.now(), Date.now() + 1)).resolves.toEqual({ granted: true });
        // A clock armed in the past has passed: the next reserve goes.
        await expect(a.reserve('c.com', now, now - 1_000)).resolves.toEqual({ granted: true });
        await expect(b.reserve('c.com', Date.now(), Date.now() + 60_000)).resolves.toEqual({ granted: true });
    });

    it.each([5_000, -5_000])('keeps the interval between hosts whose clocks differ by %i ms', async (offset) => {
        const [a, b] = [host(), host(offset)];
        const nowA = Date.now();
        await expect(a.reserve('a.com', nowA, nowA + 10_000)).resolves.toEqual({ granted: true });
        const nowB = Date.now() + offset;
        const answer = await b.reserve('a.com', nowB, nowB + 10_000);
        // B waits the 10 s interval measured in its own clock, not 10 s ± the skew.
        expect(answer.granted).toBe(false);
        const waitB = !answer.granted ? answer.notBefore - nowB : NaN;
        expect(waitB).toBeGreaterThan(10_000 - SLACK);
        expect(waitB).toBeLessThanOrEqual(10_000);
        // And B's reading of the shared clock is A's, shifted into B's time.
        const seenByB = await b.read('a.com');
        expect(Math.abs(seenByB.nextAt - offset - (nowA + 10_000))).toBeLessThan(SLACK);
    });

    it('extends with the largest wait winning, and refuses until the backoff passes', async () => {
        const a = host();
        const now = Date.now();
        await a.extend('a.com', { backoffUntil: now + 30_000, nextAt: now + 5_000 });
        await a.extend('a.com', { backoffUntil: now + 10_000, nextAt: now + 40_000 });
        const clocks = await a.read('a.com');
        expect(Math.abs(clocks.backoffUntil - (now + 30_000))).toBeLessThan(SLACK);
        expect(Math.abs(clocks.nextAt - (now + 40_000))).toBeLessThan(SLACK);
        const answer = await a.reserve('a.com', Date.now(), Date.now() + 1);
        expect(!answer.granted && Math.abs(answer.notBefore - (now + 40_000))).toBeLessThan(SLACK);
    });

    it('settles its own lease earlier, but only moves a lease it does not hold forward', async () => {
        const [a, b] = [host(), host(3_000)];
        const now = Date.now();
        const lease = now + 30_000;
        await expect(a.reserve('a.com', now, lease)).resolves.toEqual({ granted: true });
        // B does not hold this lease: an earlier end from B is ignored, a later one kept.
        await b.settle('a.com', lease + 3_000, now + 3_000 + 1_000);
        expect(Math.abs((await a.read('a.com')).nextAt - lease)).toBeLessThan(SLACK);
        await a.settle('a.com', lease, now + 2_000);
        expect(Math.abs((await a.read('a.com')).nextAt - (now + 2_000))).toBeLessThan(SLACK);
        // The lease is spent: settling it again only moves forward.
        await a.settle('a.com', lease, now + 1_000);
        expect(Math.abs((await a.read('a.com')).nextAt - (now + 2_000))).toBeLessThan(SLACK);
    });

    it('reserves several scopes all-or-nothing', async () => {
        const [a, b] = [host(), host()];
        const now = Date.now();
        await b.reserve('held.com', now, now + 60_000);
        const refused = await a.reserveMany(
            [
                { key: 'free.com', nextAt: now + 5_000 },
                { key: 'held.com', nextAt: now + 5_000 },
            ],
            now,
        );
        expect(refused.granted).toBe(false);
        expect(!refused.granted && Math.abs(refused.notBefore - (now + 60_000))).toBeLessThan(SLACK);
        expect((await a.read('free.com')).nextAt).toBe(0);
        const granted = await a.reserveMany(
            [
                { key: 'free.com', nextAt: now + 5_000 },
                { key: '@budget', nextAt: now + 7_000 },
            ],
            now,
        );
        expect(granted).toEqual({ granted: true });
        expect(Math.abs((await a.read('free.com')).nextAt - (now + 5_000))).toBeLessThan(SLACK);
        expect(Math.abs((await a.read('@budget')).nextAt - (now + 7_000))).toBeLessThan(SLACK);
    });

    it('gives back the scopes it took when another refuses, one by one as on Cluster', async () => {
        const [a, b] = [host(), host()];
        // The one-by-one path that a Cluster client takes (its scopes may sit in different slots).
        Object.defineProperty(a.client, 'isCluster', { value: true });
        const now = Date.now();
        await b.reserve('held.com', now, now + 60_000);
        await b.reserve('earlier.com', now, now - 500);
        const answer = await a.reserveMany(
            [
                { key: 'free.com', nextAt: now + 5_000 },
                { key: 'earlier.com', nextAt: now + 5_000 },
                { key: 'held.com', nextAt: now + 5_000 },
            ],
            now,
        );
        expect(answer.granted).toBe(false);
        expect((await a.read('free.com')).nextAt).toBe(0);
        expect(Math.abs((await a.read('earlier.com')).nextAt - (now - 500))).toBeLessThan(SLACK);
    });

    it('lets idle keys expire past their latest clock, and keeps odd keys apart in one tag each', async () => {
        const a = host(0, 5_000);
        const now = Date.now();
        const keys = ['[2001:db8::1]:8080', 'bücher.de', 'a}b', 'a%7Db'];
        for (const key of keys) {
            await expect(a.reserve(key, now, now + 1_000)).resolves.toEqual({ granted: true });
            await a.recordRefusal(key, { baseMs: 2_000, maxMs: 10_000 });
            await a.acquireSlot(key, 1, 3_000);
            await a.spendQuota(key, 1, 10, 60_000);
        }
        const stored = await hosts.redis.keys(`{${hosts.prefix}*`);
        expect(stored).toHaveLength(keys.length * 3);
        // Each write sets the TTL by itself: a key only reserved, one only extended, one only settled.
        await a.reserve('reserved.com', now, now + 1_000);
        await a.extend('extended.com', { nextAt: now + 1_000 });
        await a.settle('settled.com', 0, now + 1_000);
        for (const key of ['reserved.com', 'extended.com', 'settled.com']) {
            const ttl = await hosts.redis.pttl(a.keysOf(key).clock);
            expect(ttl).toBeGreaterThan(1_000 + 5_000 - SLACK * 4);
            expect(ttl).toBeLessThanOrEqual(1_000 + 5_000);
        }
        expect(new Set(stored.map(clusterHashTag)).size).toBe(keys.length);
        for (const key of keys) {
            const { clock, slots, quota } = a.keysOf(key);
            // The clock's latest time is the backoff's decay, 2 s past its 2 s backoff.
            const clockTtl = await hosts.redis.pttl(clock);
            expect(clockTtl).toBeGreaterThan(4_000 + 5_000 - SLACK * 4);
            expect(clockTtl).toBeLessThanOrEqual(4_000 + 5_000);
            expect(await hosts.redis.pttl(slots)).toBeGreaterThan(3_000 + 5_000 - SLACK * 4);
            expect(await hosts.redis.pttl(quota)).toBeGreaterThan(5_000);
        }
    });

    it('closes the connection it opened and leaves a given one open', async () => {
        const own = host();
        await own.close();
        expect(own.client.status).toBe('end');
        const given = new RedisDomainClock({ client: hosts.redis, keyPrefix: hosts.prefix });
        await given.reserve('a.com', Date.now(), Date.now() + 1);
        await given.close();
        await expect(hosts.redis.ping()).resolves.toBe('PONG');
    });
});
