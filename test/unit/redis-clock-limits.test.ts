import { describeRedis } from '../helpers/redis';
import { redisClockHosts } from '../helpers/redis-clock-hosts';

// Times read back from Redis against this host's clock, a round trip and a busy event loop apart:
// a second of slack still tells a 30 s backoff from a 60 s one.
const SLACK = 1_000;
// Real waits: these decisions run on Redis TIME, which no test can move by hand.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeRedis('RedisDomainClock shared limits', () => {
    const { host } = redisClockHosts('limits');

    describe('recordRefusal', () => {
        const policy = { baseMs: 10_000, maxMs: 60_000, factor: 2 };

        it('escalates once per burst across hosts; a server wait only lengthens the backoff', async () => {
            const [a, b] = [host(), host(4_000)];
            const first = await a.recordRefusal('a.com', policy);
            expect(first).toMatchObject({ escalated: true, level: 1, waitMs: 10_000 });
            const second = await b.recordRefusal('a.com', policy);
            expect(second).toMatchObject({ escalated: false, level: 1 });
            // The same deadline, seen in B's clock (4 s ahead).
            expect(Math.abs(second.backoffUntil - 4_000 - first.backoffUntil)).toBeLessThan(SLACK);
            const shorter = await b.recordRefusal('a.com', { ...policy, waitMs: 1_000 });
            expect(Math.abs(shorter.backoffUntil - second.backoffUntil)).toBeLessThan(SLACK);
            const longer = await a.recordRefusal('a.com', { ...policy, waitMs: 30_000 });
            expect(longer).toMatchObject({ escalated: false, level: 1 });
            expect(Math.abs(longer.backoffUntil - (Date.now() + 30_000))).toBeLessThan(SLACK);
            // Capped by maxMs.
            const capped = await a.recordRefusal('a.com', { ...policy, waitMs: 600_000 });
            expect(Math.abs(capped.backoffUntil - (Date.now() + 60_000))).toBeLessThan(SLACK);
            // The backoff holds every host's reservations.
            const refused = await b.reserve('a.com', Date.now() + 4_000, Date.now() + 4_001);
            expect(!refused.granted && Math.abs(refused.notBefore - 4_000 - capped.backoffUntil)).toBeLessThan(SLACK);
        });

        it('escalates again after the backoff ends, and starts over after a quiet period', async () => {
            const [a, b] = [host(), host()];
            expect(await a.recordRefusal('a.com', { baseMs: 200, maxMs: 60_000 })).toMatchObject({ level: 1 });
            await sleep(250); // past the backoff (200 ms), before the quiet period ends (400 ms)
            const next = await b.recordRefusal('a.com', { baseMs: 200, maxMs: 60_000 });
            expect(next).toMatchObject({ escalated: true, level: 2, waitMs: 400 });

            expect(await a.recordRefusal('b.com', { baseMs: 30, maxMs: 60_000 })).toMatchObject({ level: 1 });
            await sleep(100); // past backoff (30 ms) and quiet period (60 ms)
            expect(await b.recordRefusal('b.com', { baseMs: 30, maxMs: 60_000 })).toMatchObject({
                escalated: true,
                level: 1,
                waitMs: 30,
            });
        });

        it('a server wait that lengthens the backoff moves the quiet period that resets the level', async () => {
            const [a, b] = [host(), host()];
            expect(await a.recordRefusal('a.com', { baseMs: 1_000, maxMs: 60_000 })).toMatchObject({ level: 1 });
            await b.recordRefusal('a.com', { baseMs: 1_000, maxMs: 60_000, waitMs: 3_000 });
            // Past the lengthened backoff (3 s), within its quiet period (1 s more, room for a loaded
            // machine's late timers): the level rises.
            await sleep(3_200);
            expect(await b.recordRefusal('a.com', { baseMs: 1_000, maxMs: 60_000 })).toMatchObject({
                escalated: true,
                level: 2,
            });
        });

        it('names a bad policy value', async () => {
            await expect(host().recordRefusal('a.com', { baseMs: 0, maxMs: 1 })).rejects.toThrow(
                /recordRefusal baseMs must be a number > 0, got 0/,
            );
            await expect(host().recordRefusal('a.com', { baseMs: 1, maxMs: 1, factor: 0.5 })).rejects.toThrow(
                /factor must be a number >= 1/,
            );
        });
    });

    describe('concurrency slots', () => {
        it('shares the limit across hosts and frees a slot on release', async () => {
            const [a, b] = [host(), host(-5_000)];
            const one = await a.acquireSlot('a.com', 2, 60_000);
            const two = await b.acquireSlot('a.com', 2, 60_000);
            expect(one).toMatchObject({ granted: true, held: 1 });
            expect(two).toMatchObject({ granted: true, held: 2 });
            const three = await a.acquireSlot('a.com', 2, 60_000);
            expect(three).toMatchObject({ granted: false, held: 2 });
            expect(!three.granted && one.granted && Math.abs(three.notBefore - one.expiresAt)).toBeLessThan(SLACK);
            expect(one.granted && (await a.releaseSlot('a.com', one.token))).toBe(true);
            expect(one.granted && (await a.releaseSlot('a.com', one.token))).toBe(false);
            expect(await b.acquireSlot('a.com', 2, 60_000)).toMatchObject({ granted: true, held: 2 });
        });

        it("frees a dead host's slot when its lease runs out, unless renewed", async () => {
            const [a, dead] = [host(), host()];
            const held = await dead.acquireSlot('a.com', 1, 300);
            const renewed = await a.acquireSlot('b.com', 1, 300);
            expect(held.granted && renewed.granted).toBe(true);
            expect(await a.acquireSlot('a.com', 1, 60_000)).toMatchObject({ granted: false });
            await sleep(150);
            expect(renewed.granted && (await a.renewSlot('b.com', renewed.token, 60_000))).toBe(true);
            await sleep(200);
            expect(await a.acquireSlot('a.com', 1, 60_000)).toMatchObject({ granted: true, held: 1 });
            expect(held.granted && (await dead.renewSlot('a.com', held.token, 60_000))).toBe(false);
            expect(await a.acquireSlot('b.com', 1, 60_000)).toMatchObject({ granted: false, held: 1 });
        });

        it('names a bad limit', async () => {
            await expect(host().acquireSlot('a.com', 0, 1_000)).rejects.toThrow(
                /acquireSlot limit must be a whole number > 0, got 0/,
            );
        });
    });

    describe('spendQuota', () => {
        it('spends all-or-nothing within the window, shared by hosts', async () => {
            const [a, b] = [host(), host(5_000)];
            const first = await a.spendQuota('api', 3, 5, 3_600_000);
            expect(first).toMatchObject({ granted: true, spent: 3 });
            const refused = await b.spendQuota('api', 3, 5, 3_600_000);
            expect(refused).toMatchObject({ granted: false, spent: 3 });
            // Both hosts see the same window end, each in its own clock.
            expect(
                !refused.granted && first.granted && Math.abs(refused.notBefore - 5_000 - first.windowEndsAt),
            ).toBeLessThan(SLACK);
            expect(await b.spendQuota('api', 1.5, 5, 3_600_000)).toMatchObject({ granted: true, spent: 4.5 });
            expect(await a.spendQuota('api', 0.5, 5, 3_600_000)).toMatchObject({ granted: true, spent: 5 });
        });

        it('corrects a spend by the reported cost while its window is kept, never below 0', async () => {
            const [a, b] = [host(), host(-3_000)];
            expect(await a.spendQuota('api', 4, 5, 3_600_000)).toMatchObject({ granted: true, spent: 4 });
            expect(await b.spendQuota('api', 3, 5, 3_600_000)).toMatchObject({ granted: false });
            // Spent a moment ago by B's clock (3 s behind): the same window.
            expect(await b.adjustQuota('api', -2.5, 3_600_000, Date.now() - 3_000)).toBe(1.5);
            expect(await b.spendQuota('api', 3, 5, 3_600_000)).toMatchObject({ granted: true, spent: 4.5 });
            expect(await a.adjustQuota('api', -100, 3_600_000, Date.now())).toBe(0);
            // A spend of a window that is over is not corrected.
            expect(await a.adjustQuota('api', 7, 3_600_000, Date.now() - 3_600_000)).toBe(0);
            expect(await a.spendQuota('api', 5, 5, 3_600_000)).toMatchObject({ granted: true, spent: 5 });
        });

        it('lets one oversized request into an empty window, alone', async () => {
            const a = host();
            expect(await a.spendQuota('api', 10, 5, 3_600_000)).toMatchObject({ granted: true, spent: 10 });
            expect(await a.spendQuota('api', 1, 5, 3_600_000)).toMatchObject({ granted: false, spent: 10 });
        });
    });
});
