import { RedisDomainClock, SharedClockError } from 'crawlee-throttling/redis';
import { CutProxy } from '../helpers/cut-proxy';
import { REDIS_URL, RedisProxy, describeRedis, deletePrefix, testRedis, uniquePrefix } from '../helpers/redis';

/** How long a call may take to fail once Redis is gone: the clock's timeout plus a reconnect attempt. */
const PROMPT_MS = 2_500;

async function timed<T>(promise: Promise<T>): Promise<{ error: unknown; ms: number }> {
    const started = Date.now();
    try {
        await promise;
        return { error: undefined, ms: Date.now() - started };
    } catch (error) {
        return { error, ms: Date.now() - started };
    }
}

describeRedis('RedisDomainClock when Redis is cut off', () => {
    let proxy: RedisProxy;
    let clock: RedisDomainClock;
    let prefix: string;

    beforeEach(async () => {
        prefix = uniquePrefix('faults');
        proxy = await RedisProxy.start();
        clock = new RedisDomainClock({ url: proxy.url, keyPrefix: prefix, timeoutMs: 1_000 });
    });
    afterEach(async () => {
        proxy.drop();
        await clock.close();
        const redis = testRedis();
        await deletePrefix(redis, prefix);
        await redis.quit();
    });

    it('rejects promptly with an error naming the call when the connection drops mid-crawl', async () => {
        let dispatched = 0;
        let failure: { error: unknown; ms: number } | undefined;
        let droppedAt = 0;
        // A crawl's reservations, back to back, until one fails.
        while (!failure) {
            const now = Date.now();
            const call = clock.reserve(`site-${dispatched % 4}.com`, now, now - 1);
            if (dispatched === 20) {
                proxy.drop();
                droppedAt = Date.now();
            }
            const outcome = await timed(call);
            if (outcome.error) failure = outcome;
            else dispatched += 1;
            if (dispatched > 500) throw new Error('the clock kept answering after Redis was cut off');
        }
        expect(dispatched).toBeGreaterThanOrEqual(20);
        expect(failure.error).toBeInstanceOf(SharedClockError);
        expect(String(failure.error)).toMatch(/RedisDomainClock: reserve of site-\d\.com failed: /);
        expect(Date.now() - droppedAt).toBeLessThan(PROMPT_MS);
        // Later calls fail promptly too rather than queue for ever.
        const later = await timed(clock.extend('site-0.com', { backoffUntil: Date.now() + 1_000 }));
        expect(later.error).toBeInstanceOf(SharedClockError);
        expect(later.ms).toBeLessThan(PROMPT_MS);
    });

    it('rejects a call in flight when Redis stops answering', async () => {
        await expect(clock.reserve('a.com', Date.now(), Date.now() + 1)).resolves.toEqual({ granted: true });
        proxy.silence();
        const stuck = await timed(clock.settle('a.com', 0, Date.now() + 1));
        expect(stuck.error).toBeInstanceOf(SharedClockError);
        expect(String(stuck.error)).toMatch(/RedisDomainClock: settle of a\.com failed: Command timed out/);
        expect(stuck.ms).toBeLessThan(PROMPT_MS);
    });

    it('fails the first call promptly when Redis was never there', async () => {
        proxy.drop();
        const never = new RedisDomainClock({ url: proxy.url, keyPrefix: prefix, timeoutMs: 1_000 });
        const first = await timed(never.reserve('a.com', Date.now(), Date.now() + 1));
        await never.close();
        expect(first.error).toBeInstanceOf(SharedClockError);
        expect(first.ms).toBeLessThan(PROMPT_MS);
    });

    it('a lease end that failed in an outage ends the lease when sent again after it', async () => {
        const line = await CutProxy.start(REDIS_URL);
        const holder = new RedisDomainClock({ url: line.urlFor(REDIS_URL), keyPrefix: prefix, timeoutMs: 1_000 });
        const other = new RedisDomainClock({ url: REDIS_URL, keyPrefix: prefix });
        try {
            const now = Date.now();
            await expect(holder.reserve('a.com', now, now + 30_000)).resolves.toEqual({ granted: true });
            line.cut();
            await expect(holder.settle('a.com', now + 30_000, now + 200)).rejects.toThrow(SharedClockError);
            line.restore();
            // Sent again once the line is back (the manager does, until the lease would have run out).
            for (let tries = 0; ; tries++) {
                const again = await timed(holder.settle('a.com', now + 30_000, now + 200));
                if (!again.error) break;
                if (tries > 10) throw again.error;
            }
            expect((await other.read('a.com')).nextAt).toBeLessThan(now + 1_000);
        } finally {
            await Promise.all([holder.close(), other.close()]);
            await line.close();
        }
    });
});
