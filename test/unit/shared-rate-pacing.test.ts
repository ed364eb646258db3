import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { log } from '@crawlee/core';
import { FileDomainClock, ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import type { SharedDomainClock } from 'crawlee-throttling';
import { PaceLearner } from '../../packages/throttling/src/pacing/pace-learner';
import { DomainState } from '../../packages/throttling/src/pacing/domain-state';
import { UNLIMITED } from '../../packages/throttling/src/pacing/domain-state-types';
import { resolveRampup } from '../../packages/throttling/src/pacing/policy';
import { SIM_HOST, SIM_START, simulateSharedCrawl, steadyPace } from '../helpers/shared-rate-sim';
import { memoryConfig } from '../helpers/storage';
import { nextReadyAt } from '../helpers/next-ready-at';
import { answerRequest } from '../helpers/answer-request';

const ADAPTIVE = resolveRampup(true)!;
const SITE = { rate: 10, burst: 1, latencyMs: 10 };

/** The same store without `tally`: each process learns from its own answers, as before the rate was shared. */
function withoutTally(clock: FileDomainClock): SharedDomainClock {
    const methods = ['reserve', 'extend', 'settle', 'recordRefusal', 'acquireSlot', 'renewSlot', 'releaseSlot'];
    const more = ['spendQuota', 'adjustQuota', 'shareRate', 'readRate'];
    return Object.fromEntries(
        [...methods, ...more].map((m) => [
            m,
            (clock as unknown as Record<string, (...args: unknown[]) => unknown>)[m].bind(clock),
        ]),
    ) as unknown as SharedDomainClock;
}

describe('a learned rate shared by processes (FileDomainClock, simulated token bucket)', () => {
    let dir: string;
    beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), 'shared-rate-pacing-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    const crawl = (store: (clock: ManualClock) => SharedDomainClock) =>
        simulateSharedCrawl({ processes: 3, pagesEach: 160, site: SITE, sharedFor: store });

    test('three processes learn the site rate together from every process answers, not a third of it each', async () => {
        const shared = await crawl((clock) => new FileDomainClock(dir, { clock }));
        const alone = await crawl((clock) => withoutTally(new FileDomainClock(join(dir, 'alone'), { clock })));
        const [together, each] = [steadyPace(shared.arrivals, 30_000), steadyPace(alone.arrivals, 30_000)];
        console.log('SHARED RATE SIM', JSON.stringify({ together, each }));

        expect(shared.handled).toEqual([160, 160, 160]);
        // One rate for the site: well above what each learning alone settles at, never above the site.
        expect(together.pace).toBeGreaterThan(SITE.rate * 0.65);
        expect(together.pace).toBeGreaterThan(each.pace * 1.5);
        expect(together.refused).toBeLessThanOrEqual(0.05);
        const refused = shared.arrivals.filter((a) => a.refused).length;
        expect(refused / shared.arrivals.length).toBeLessThanOrEqual(0.05);
    }, 120_000);

    test('four processes sharing one learned rate reach at least 90 % of the site rate', async () => {
        const shared = await simulateSharedCrawl({
            processes: 4,
            pagesEach: 150,
            site: { rate: 8, burst: 2, latencyMs: 20 },
            sharedFor: (clock) => new FileDomainClock(dir, { clock }),
        });
        const steady = steadyPace(shared.arrivals, 30_000);
        console.log('SHARED RATE SIM 4x8', JSON.stringify(steady));
        expect(shared.handled).toEqual([150, 150, 150, 150]);
        expect(steady.pace).toBeGreaterThanOrEqual(8 * 0.9);
    }, 120_000);

    test('a growth is shared only after seeing the pace no other process moved meanwhile: three processes keep 80 % of a 5 req/s site', async () => {
        const shared = await simulateSharedCrawl({
            processes: 3,
            pagesEach: 80,
            site: { rate: 5, burst: 1, latencyMs: 20 },
            sharedFor: (clock) => new FileDomainClock(dir, { clock }),
        });
        const steady = steadyPace(shared.arrivals, 30_000);
        const refused = shared.arrivals.filter((a) => a.refused).length / shared.arrivals.length;
        console.log('SHARED RATE SIM 3x5', JSON.stringify({ steady, refused }));
        expect(steady.pace).toBeGreaterThan(5 * 0.8);
        expect(refused).toBeLessThanOrEqual(0.05);
    }, 120_000);

    test('two processes hold the pace they proved: a pace held just under it is no cut for the other', async () => {
        const shared = await simulateSharedCrawl({
            processes: 2,
            pagesEach: 240,
            site: SITE,
            sharedFor: (clock) => new FileDomainClock(dir, { clock }),
        });
        const steady = steadyPace(shared.arrivals, 30_000);
        console.log('SHARED RATE SIM 2', JSON.stringify(steady));
        expect(steady.pace).toBeGreaterThan(SITE.rate * 0.8);
        expect(steady.refused).toBeLessThanOrEqual(0.05);
    }, 120_000);
});

describe('following the pace another process set', () => {
    let dir: string;
    beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), 'shared-rate-follow-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    const managers = (clock: ManualClock, store: SharedDomainClock) =>
        [1, 2].map((p) => {
            const manager = new ThrottlingRequestManager(
                {
                    domains: 'all',
                    queueLayout: 'perDomain',
                    clock,
                    respectCrawlDelay: false,
                    maxFreeRetries: 100,
                    sharedClock: store,
                },
                memoryConfig(),
            );
            return { manager, p };
        });
    const rateOf = (manager: ThrottlingRequestManager) => manager.snapshot().find((s) => s.domain === SIM_HOST)?.rampup;
    /** The pacer itself (the snapshot holds a copy), to set a pace its own window would have raised. */
    const livePacer = (manager: ThrottlingRequestManager) =>
        (manager as unknown as { parts: { states: { read(k: string): DomainState | undefined } } }).parts.states.read(
            SIM_HOST,
        )!.rampupState as PaceLearner;

    /** A is answered twice, then refused (Retry-After: 1): its pacer learns a pace and shares it. */
    async function refuseA(clock: ManualClock, a: ThrottlingRequestManager) {
        for (const status of [200, 200, 429]) {
            const request = (await a.fetchNextRequest())!;
            clock.advance(20);
            await answerRequest(a, request, status, status === 429 ? '1' : undefined);
            clock.advance(100);
        }
        return rateOf(a)!.rate;
    }

    test('a process refused nowhere takes the pace another learned from a refusal, and waits one interval of it', async () => {
        const clock = new ManualClock(SIM_START);
        const [a, b] = managers(clock, new FileDomainClock(dir, { clock }));
        for (const { manager, p } of [a, b])
            await manager.addRequestsBatched(
                [0, 1, 2, 3].map((i) => ({ url: `https://${SIM_HOST}/${p}/${i}` })),
                { waitForAllRequestsToBeAdded: true },
            );
        const learned = await refuseA(clock, a.manager);
        expect(Number.isFinite(learned)).toBe(true);

        clock.advance(1_000);
        const sent = (await b.manager.fetchNextRequest())!;
        const sentAt = clock.now();
        // B's first request left unpaced; on its way out B read the shared pace and took it.
        expect(rateOf(b.manager)!.rate).toBe(learned);
        clock.advance(20);
        await answerRequest(b.manager, sent, 200);
        // Its next request waits one interval of that pace, not none (it was armed unpaced).
        expect(await nextReadyAt(b.manager)).toBeGreaterThanOrEqual(sentAt + 1000 / learned - 1);
    });

    // A raise from 1 to 2 req/s there; or one that came after this process's own window had raised its
    // pace to 3 (not yet shared): from the pace both last shared, a smaller raise, not a refusal.
    test.each([
        ['a raise another process made', undefined],
        ['a raise another process made, smaller than one made here meanwhile,', 3],
    ])('%s does not hold the next dispatch here: it goes when the shared clock opens', async (_, raisedHere) => {
        const clock = new ManualClock(SIM_START);
        const store = new FileDomainClock(dir, { clock });
        const [b] = managers(clock, store);
        await b.manager.addRequestsBatched(
            [0, 1, 2, 3].map((i) => ({ url: `https://${SIM_HOST}/${i}` })),
            { waitForAllRequestsToBeAdded: true },
        );
        const first = (await b.manager.fetchNextRequest())!;
        clock.advance(20);
        await answerRequest(b.manager, first, 200);
        // Another process cut the pace to 1 req/s: followed on the way out of the next request.
        store.shareRate(SIM_HOST, 1, clock.now());
        clock.advance(100);
        const second = (await b.manager.fetchNextRequest())!;
        expect(rateOf(b.manager)!.rate).toBe(1);
        clock.advance(20);
        await answerRequest(b.manager, second, 200);
        clock.advance(1_500);
        const third = (await b.manager.fetchNextRequest())!;
        clock.advance(1_500);
        if (raisedHere) livePacer(b.manager).rate = raisedHere;
        // Meanwhile it raised the pace to 2 req/s, followed here when the slow answer comes; and it
        // sent a request: the shared clock opens in 50 ms.
        store.shareRate(SIM_HOST, 2, clock.now());
        store.extend(SIM_HOST, { nextAt: clock.now() + 50 });
        const opensAt = clock.now() + 50;
        await answerRequest(b.manager, third, 200);
        expect(rateOf(b.manager)!.rate).toBe(2);
        // Taken as a refusal there, the pace asked here would be the refused bound.
        if (raisedHere) expect(rateOf(b.manager)!.unsafeRate).toBeGreaterThan(raisedHere);
        // Held for an interval of the new pace from now, it would wait until 500 ms from now.
        expect(await nextReadyAt(b.manager)).toBeLessThanOrEqual(opensAt);
        clock.set(opensAt);
        const fourth = await b.manager.fetchNextRequest();
        expect(fourth).not.toBeNull();
        await answerRequest(b.manager, fourth!, 200);
    });

    test('a rate shared long ago (an earlier crawl, a file that outlived it) is not followed', async () => {
        const clock = new ManualClock(SIM_START);
        const store = new FileDomainClock(dir, { clock });
        store.shareRate(SIM_HOST, 0.5, SIM_START - 11 * 60_000);
        const [b] = managers(clock, store);
        await b.manager.addRequestsBatched([{ url: `https://${SIM_HOST}/x` }], { waitForAllRequestsToBeAdded: true });
        const first = (await b.manager.fetchNextRequest())!;
        expect(rateOf(b.manager)!.rate).toBe(Number.POSITIVE_INFINITY);
        clock.advance(20);
        await answerRequest(b.manager, first, 200);
        store.shareRate(SIM_HOST, 0.5, SIM_START - 60_000);
        await b.manager.addRequestsBatched([{ url: `https://${SIM_HOST}/y` }], { waitForAllRequestsToBeAdded: true });
        clock.advance(1_000);
        const second = await b.manager.fetchNextRequest();
        expect(second).not.toBeNull();
        // A minute old: followed.
        expect(rateOf(b.manager)!.rate).toBe(0.5);
        // Nothing left in flight (its shared slot would be renewed after the test).
        await answerRequest(b.manager, second!, 200);
    });

    test('a store whose shareRate fails at once, and tallies, is not asked again and again: the offer waits for the next request', async () => {
        const clock = new ManualClock(SIM_START);
        const file = new FileDomainClock(dir, { clock });
        let offers = 0;
        const failing: SharedDomainClock = Object.assign(withoutTally(file), {
            tally: file.tally.bind(file),
            shareRate: () => {
                offers += 1;
                throw new Error('store down');
            },
        });
        const warnOnce = jest.spyOn(Object.getPrototypeOf(log), 'warningOnce').mockImplementation(() => undefined);
        const [a] = managers(clock, failing);
        await a.manager.addRequestsBatched(
            [0, 1, 2, 3].map((i) => ({ url: `https://${SIM_HOST}/${i}` })),
            { waitForAllRequestsToBeAdded: true },
        );
        await refuseA(clock, a.manager);
        warnOnce.mockRestore();
        // The cut was offered once at the refusal, and once more with each later call at most.
        expect(offers).toBeGreaterThan(0);
        expect(offers).toBeLessThanOrEqual(2);
    });

    test('a store whose tally and shareRate fail loses no request and throws nothing: one warning, pacing goes on alone', async () => {
        const clock = new ManualClock(SIM_START);
        const file = new FileDomainClock(dir, { clock });
        let calls = 0;
        const failing: SharedDomainClock = Object.assign(withoutTally(file), {
            tally: () => {
                calls += 1;
                return Promise.reject(new Error('store down'));
            },
            shareRate: () => {
                throw new Error('store down');
            },
        });
        const warnOnce = jest.spyOn(Object.getPrototypeOf(log), 'warningOnce').mockImplementation(() => undefined);
        const [a] = managers(clock, failing);
        await a.manager.addRequestsBatched(
            [0, 1, 2, 3].map((i) => ({ url: `https://${SIM_HOST}/${i}` })),
            { waitForAllRequestsToBeAdded: true },
        );
        const learned = await refuseA(clock, a.manager);
        expect(Number.isFinite(learned)).toBe(true);
        await new Promise((resolve) => setImmediate(resolve));
        let handled = 0;
        for (let guard = 0; guard < 50 && handled < 2; guard++) {
            clock.set(Math.max(clock.now(), (await nextReadyAt(a.manager)) ?? clock.now()));
            const request = await a.manager.fetchNextRequest();
            if (!request) continue;
            clock.advance(20);
            await answerRequest(a.manager, request, 200);
            handled += 1;
        }
        await new Promise((resolve) => setImmediate(resolve));
        expect(handled).toBe(2);
        expect(await a.manager.isFinished()).toBe(true);
        expect(calls).toBeGreaterThan(0);
        const lines = warnOnce.mock.calls.map(([m]) => String(m));
        warnOnce.mockRestore();
        expect(lines.some((w) => /Could not share the learned rate of shop\.example/.test(w))).toBe(true);
    });
});

describe("the other processes' counts a reservation answers", () => {
    let dir: string;
    beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), 'shared-rate-reserve-'));
    });
    afterEach(() => {
        jest.restoreAllMocks();
        rmSync(dir, { recursive: true, force: true });
    });

    /** One manager sharing `store`; the test itself plays the other processes (tallies in `file`). */
    async function oneProcess(clock: ManualClock, store: SharedDomainClock, pages: number) {
        const manager = new ThrottlingRequestManager(
            { domains: 'all', queueLayout: 'perDomain', clock, respectCrawlDelay: false, sharedClock: store },
            memoryConfig(),
        );
        await manager.addRequestsBatched(
            Array.from({ length: pages }, (_, i) => ({ url: `https://${SIM_HOST}/${i}` })),
            { waitForAllRequestsToBeAdded: true },
        );
        return manager;
    }
    /** What the pacer was fed as the other processes' dispatches and answers, over the calls recorded. */
    const fed = (spy: jest.SpyInstance) =>
        spy.mock.calls.reduce(([d, a], [, dd, aa]) => [d + (dd as number), a + (aa as number)], [0, 0]);

    async function refusedAttempt(store: (file: FileDomainClock) => SharedDomainClock) {
        const clock = new ManualClock(SIM_START);
        const file = new FileDomainClock(dir, { clock });
        const manager = await oneProcess(clock, store(file), 3);
        const first = (await manager.fetchNextRequest())!;
        clock.advance(20);
        await answerRequest(manager, first, 200);
        // Another process sent 3 and was answered twice; then it holds the shared clock.
        file.tally(SIM_HOST, { dispatched: 3, answered: 2 });
        file.extend(SIM_HOST, { nextAt: clock.now() + 5_000 });
        const noted = jest.spyOn(PaceLearner.prototype, 'noteOthers');
        expect(await manager.fetchNextRequest()).toBeNull();
        const counts = fed(noted);
        noted.mockRestore();
        return counts;
    }

    test('a reservation the shared clock refuses still brings them, with no call of its own', async () => {
        expect(await refusedAttempt((file) => file)).toEqual([3, 2]);
        // A clock whose reservations carry no totals: nothing reaches the pacer until this process tallies.
        rmSync(dir, { recursive: true, force: true });
        const bare = (file: FileDomainClock) =>
            Object.assign(withoutTally(file), {
                tally: file.tally.bind(file),
                reserve: (key: string, now: number, nextAt: number) => {
                    const { tally: _, ...rest } = file.reserve(key, now, nextAt);
                    return rest;
                },
            });
        expect(await refusedAttempt(bare)).toEqual([0, 0]);
    });

    test('an answer older than one already read is not read again: the counts are fed once', async () => {
        const clock = new ManualClock(SIM_START);
        const file = new FileDomainClock(dir, { clock });
        let hold: ((release: () => void) => void) | undefined;
        const slow = Object.assign(withoutTally(file), {
            // While `hold` is set, a tally is added at once and answered when the test says.
            tally: (key: string, add: { dispatched: number; answered: number }) => {
                const answer = file.tally(key, add);
                if (!hold) return answer;
                const take = hold;
                return new Promise<typeof answer>((resolve) => take(() => resolve(answer)));
            },
        });
        const manager = await oneProcess(clock, slow, 3);
        const first = (await manager.fetchNextRequest())!;
        clock.advance(20);
        await answerRequest(manager, first, 200);
        const noted = jest.spyOn(PaceLearner.prototype, 'noteOthers');
        let release: () => void = () => undefined;
        hold = (r) => (release = r);
        // The second request's departure is tallied, and answered late...
        const second = (await manager.fetchNextRequest())!;
        hold = undefined;
        clock.advance(20);
        await answerRequest(manager, second, 200);
        // ...after another process's work and a reservation of this one, whose answer was read first.
        file.tally(SIM_HOST, { dispatched: 2, answered: 2 });
        file.extend(SIM_HOST, { nextAt: clock.now() + 1_000 });
        expect(await manager.fetchNextRequest()).toBeNull();
        release();
        await new Promise((resolve) => setImmediate(resolve));
        file.tally(SIM_HOST, { dispatched: 1, answered: 1 });
        clock.advance(1_000);
        const third = (await manager.fetchNextRequest())!;
        expect(third).not.toBeNull();
        // Read in order, the late answer's lower totals would look like a store that forgot the key,
        // and the 2 read before would be fed again.
        expect(fed(noted)).toEqual([3, 3]);
        await answerRequest(manager, third, 200);
    });
});

describe('PaceLearner, fed by other processes', () => {
    test("others' answers count in the delivery sample: a refusal learns the site's rate, not this process's share", () => {
        const p = new PaceLearner(20);
        p.onDispatch(0, ADAPTIVE);
        p.onTrigger(0, ADAPTIVE, 0);
        // Over 2 s the site accepted 18: 6 of them ours, 12 the other processes'.
        for (let i = 0; i < 6; i++) p.onAnswer(i * 300);
        p.noteOthers(2_000, 12, 12);
        p.onDispatch(2_000, ADAPTIVE);
        p.onTrigger(2_000, ADAPTIVE, 0);
        expect(p.rate).toBeCloseTo(9 * 0.95, 5);
    });

    test("others' dispatches count in a window: a process sending a third of the pace still proves it", () => {
        const grown = (others: number) => {
            const p = new PaceLearner(6);
            p.onDispatch(0, ADAPTIVE);
            for (let t = 500; t <= 2_000; t += 500) {
                p.noteOthers(t, others, others);
                p.onDispatch(t, ADAPTIVE);
            }
            return p.rate;
        };
        expect(grown(2)).toBeGreaterThan(6);
        expect(grown(0)).toBe(6);
    });

    test('a dispatch a scope takes back (the shared clock said not yet) is taken back from its pacer too', () => {
        const state = new DomainState(SIM_HOST);
        const policy = { ...UNLIMITED, rampup: ADAPTIVE };
        state.ramp(ADAPTIVE);
        (state.rampupState as PaceLearner).rate = 6;
        for (let t = 0; t <= 2_000; t += 100) {
            const reservation = state.dispatch(t, 0, policy);
            if (t % 500 !== 0) state.cancelDispatch(reservation);
            else state.holdDispatchUntil(t);
        }
        expect(state.rampupState!.rate).toBe(6);
    });

    test('a dispatch undone (another process held the shared clock) proves no pace', () => {
        const p = new PaceLearner(6);
        for (let t = 0; t <= 2_000; t += 100) {
            p.onDispatch(t, ADAPTIVE);
            if (t % 500 !== 0) p.undoDispatch();
        }
        // 5 dispatches went out in 2 s at a pace allowing 12: not pace-bound, no growth.
        expect(p.rate).toBe(6);
    });

    test('follows a cut as a refusal (the pace asked for becomes the refused bound) and a growth as a quiet window', () => {
        const p = new PaceLearner(8);
        p.follow(1_000, ADAPTIVE, 5);
        expect([p.rate, p.safeRate, p.unsafeRate]).toEqual([5, 5, 8]);
        p.follow(3_000, ADAPTIVE, 6);
        expect([p.rate, p.safeRate, p.unsafeRate]).toEqual([6, 5, 8]);
    });
});
