import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileDomainClock, ManualClock } from 'crawlee-throttling';
import type { SharedDomainClock } from 'crawlee-throttling';

import type { SharedRate } from 'crawlee-throttling/types';
import { describeRedis } from '../helpers/redis';
import { redisClockHosts } from '../helpers/redis-clock-hosts';

/** Slack for the time a Redis call takes on a busy machine. */
const SLACK = 250;

/**
 * The rules every store keeps for a learned rate: the latest wins; bad input named. Redis carries `at`
 * through its own time, so it comes back within `atSlack` ms.
 */
function rateRules(make: (offsetMs?: number) => SharedDomainClock, now: () => number, atSlack: number) {
    const near = (answer: SharedRate | undefined, rate: number, at: number) => {
        expect(answer?.rate).toBe(rate);
        expect(Math.abs(answer!.at - at)).toBeLessThanOrEqual(atSlack);
    };
    it('keeps the rate learned latest and answers the rate in force to an older offer', async () => {
        const [a, b] = [make(), make()];
        const t = now();
        expect(await a.readRate!('shop.example')).toBeUndefined();
        near(await a.shareRate!('shop.example', 4.5, t), 4.5, t);
        near(await b.shareRate!('shop.example', 2.25, t + 1_000), 2.25, t + 1_000);
        // Learned before the stored one: ignored, and told what is in force.
        near(await a.shareRate!('shop.example', 9, t + 500), 2.25, t + 1_000);
        near(await a.readRate!('shop.example'), 2.25, t + 1_000);
        // Another key is its own.
        expect(await b.readRate!('other.example')).toBeUndefined();
    });

    it('carries a fractional rate exactly', async () => {
        const a = make();
        const t = now();
        near(await a.shareRate!('shop.example', 3.14159265358979, t), 3.14159265358979, t);
        near(await a.shareRate!('shop.example', 0.1 + 0.2, t + 1_000), 0.1 + 0.2, t + 1_000);
        near(await a.readRate!('shop.example'), 0.1 + 0.2, t + 1_000);
    });

    it("tallies every host's dispatches and accepted answers per key, and answers the rate in force with them", async () => {
        const [a, b] = [make(), make()];
        expect(await a.tally!('shop.example', { dispatched: 3, answered: 2 })).toEqual({ dispatched: 3, answered: 2 });
        expect(await b.tally!('shop.example', { dispatched: 4, answered: 1 })).toEqual({ dispatched: 7, answered: 3 });
        // Nothing to add: a read of the totals.
        expect(await a.tally!('shop.example', { dispatched: 0, answered: 0 })).toEqual({ dispatched: 7, answered: 3 });
        expect(await b.tally!('other.example', { dispatched: 1, answered: 1 })).toEqual({ dispatched: 1, answered: 1 });
        const t = now();
        await b.shareRate!('shop.example', 2.5, t);
        const after = await a.tally!('shop.example', { dispatched: 1, answered: 0 });
        expect([after.dispatched, after.answered]).toEqual([8, 3]);
        near(after.rate, 2.5, t);
    });

    it('answers the totals and the rate in force with every reservation, granted or not, once a host tallied', async () => {
        const [a, b] = [make(), make()];
        const t = now();
        // Nothing tallied yet: no totals to answer.
        expect((await a.reserve('shop.example', t, t + 60_000)).tally).toBeUndefined();
        await b.tally!('shop.example', { dispatched: 4, answered: 3 });
        const refused = await b.reserve('shop.example', now(), now() + 100);
        expect(refused.granted).toBe(false);
        expect(refused.tally).toEqual({ dispatched: 4, answered: 3 });
        await a.shareRate!('shop.example', 2.5, t);
        await a.tally!('other.example', { dispatched: 1, answered: 0 });
        const granted = await b.reserve('other.example', now(), now() + 100);
        expect(granted).toEqual({ granted: true, tally: { dispatched: 1, answered: 0 } });
        const withRate = await a.reserve('shop.example', now(), now());
        expect([withRate.tally?.dispatched, withRate.tally?.answered]).toEqual([4, 3]);
        near(withRate.tally?.rate, 2.5, t);
    });

    it('names a tally count that is not a whole number >= 0', async () => {
        const a = make();
        for (const [field, bad] of [
            ['dispatched', -1],
            ['answered', 1.5],
            ['dispatched', Number.NaN],
        ] as const) {
            const add = { dispatched: 0, answered: 0, [field]: bad };
            await expect(async () => a.tally!('shop.example', add)).rejects.toThrow(
                new RegExp(`tally ${field} must be a whole number >= 0, got`),
            );
        }
    });

    it('names a rate that is not a number > 0', async () => {
        const a = make();
        for (const bad of [0, -1, Number.POSITIVE_INFINITY, Number.NaN]) {
            await expect(async () => a.shareRate!('shop.example', bad, now())).rejects.toThrow(
                /shareRate rate must be a number > 0, got/,
            );
        }
    });
}

describe('FileDomainClock learned rate', () => {
    let dir: string;
    const clock = new ManualClock();
    beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), 'shared-rate-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    rateRules(
        () => new FileDomainClock(dir, { clock }),
        () => clock.now(),
        0,
    );

    it('at a tie keeps the lower rate', () => {
        const a = new FileDomainClock(dir, { clock });
        a.shareRate('shop.example', 3, clock.now());
        expect(a.shareRate('shop.example', 7, clock.now())).toEqual({ rate: 3, at: clock.now() });
        expect(a.shareRate('shop.example', 2, clock.now())).toEqual({ rate: 2, at: clock.now() });
    });

    it('keeps the rate beside the clocks, in the same file, without touching them', () => {
        const a = new FileDomainClock(dir, { clock });
        expect(a.reserve('shop.example', clock.now(), clock.now() + 200)).toEqual({ granted: true });
        a.shareRate('shop.example', 5, clock.now());
        expect(a.read('shop.example')).toEqual({ nextAt: clock.now() + 200, backoffUntil: 0 });
        expect(a.readRecord('shop.example').rate).toEqual({ rate: 5, at: clock.now() });
    });
});

describeRedis('RedisDomainClock learned rate', () => {
    const hosts = redisClockHosts('rate');
    const { host } = hosts;

    rateRules(host, () => Date.now(), SLACK);

    it('carries when a rate was learned across hosts whose clocks differ (Redis TIME decides)', async () => {
        const [a, b] = [host(), host(5_000)];
        const learnedAt = Date.now();
        await a.shareRate('shop.example', 3, learnedAt);
        const seen = await b.readRate('shop.example');
        // B's clock is 5 s ahead: the same moment reads 5 s later there.
        expect(seen?.rate).toBe(3);
        expect(Math.abs(seen!.at - (learnedAt + 5_000))).toBeLessThan(SLACK);
        // An offer from A made after B's by the real clock wins, though A's clock reads 5 s less.
        await b.shareRate('shop.example', 2, Date.now() + 5_000);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect((await a.shareRate('shop.example', 6, Date.now())).rate).toBe(6);
    });

    it('stores it under the key hash tag and lets it expire once idle', async () => {
        const a = host(0, 60_000);
        await a.shareRate('shop.example', 3, Date.now());
        const key = a.keysOf('shop.example').rate;
        expect(key).toBe(`{${hosts.prefix}shop.example}:rate`);
        expect(await hosts.redis.hget(key, 'rate')).toBe('3');
        const ttl = await hosts.redis.pttl(key);
        expect(ttl).toBeGreaterThan(60_000 - SLACK);
        expect(ttl).toBeLessThanOrEqual(60_000);
    });
});
