import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileDomainClock, ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';
import { withPort } from '../helpers/throttler-port';
import { nextReadyAt } from '../helpers/next-ready-at';
import { answerRequest, nextRequest } from '../helpers/answer-request';

const HOST = 'https://shop.example';

/** Two slots and a 200 ms interval: a paced domain with more than one request in flight. */
function setup() {
    const clock = new ManualClock(1_700_000_000_000);
    const { manager, port } = withPort(
        () =>
            new ThrottlingRequestManager(
                {
                    domains: 'all',
                    queueLayout: 'perDomain',
                    clock,
                    rampup: false,
                    respectCrawlDelay: false,
                    scopes: { 'shop.example': { delaySecs: 0.2, concurrency: 2 } },
                },
                memoryConfig(),
            ),
    );
    return { clock, manager, port };
}

describe('a send keeps the interval after its domain’s previous send', () => {
    test('a request handed out while an earlier one still lagged in the hooks waits for the interval after it', async () => {
        const { clock, manager, port } = setup();
        for (const url of [`${HOST}/0`, `${HOST}/1`, `${HOST}/2`]) await manager.addRequest({ url });
        const first = (await manager.fetchNextRequest())!;
        port.checkReachable({ request: first });
        // The first one lags 150 ms in the crawler's hooks; the second is handed out on time.
        clock.advance(200);
        const second = (await manager.fetchNextRequest())!;
        expect(second).not.toBeNull();
        port.checkReachable({ request: second });
        clock.advance(50);
        // The first is sent 250 ms after its handout: no earlier send, so it goes at once.
        expect(port.departs({ request: first })).toBe(0);
        clock.advance(10);
        // The second reaches got 10 ms later: it is held for the rest of the first one's interval.
        expect(port.departs({ request: second })).toBe(190);
        // And the next handout counts its interval from that held send (at 450 ms), not from the
        // second's handout: 650 ms, though a slot is free.
        await manager.markRequestHandled(first);
        clock.advance(389);
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(1);
        expect(await manager.fetchNextRequest()).not.toBeNull();
    });

    test('sends an interval apart are not held', async () => {
        const { clock, manager, port } = setup();
        for (const url of [`${HOST}/0`, `${HOST}/1`]) await manager.addRequest({ url });
        const first = (await manager.fetchNextRequest())!;
        expect(port.departs({ request: first })).toBe(0);
        clock.advance(200);
        const second = (await manager.fetchNextRequest())!;
        expect(port.departs({ request: second })).toBe(0);
    });

    test('an unpaced domain is never held', async () => {
        const clock = new ManualClock(1_700_000_000_000);
        const { manager, port } = withPort(
            () => new ThrottlingRequestManager({ domains: 'all', rampup: false, clock }, memoryConfig()),
        );
        for (const url of [`${HOST}/0`, `${HOST}/1`]) await manager.addRequest({ url });
        const first = (await manager.fetchNextRequest())!;
        const second = (await manager.fetchNextRequest())!;
        expect(port.departs({ request: first })).toBe(0);
        expect(port.departs({ request: second })).toBe(0);
    });
});

describe('a learned pace shared one request at a time across processes (a lease until the response)', () => {
    let dir: string;
    beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), 'send-spacing-lease-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    /** A process with the defaults a user has (adaptive pacing, one at a time), sharing `store`. */
    const crawlerProcess = (clock: ManualClock, store: FileDomainClock, p: number) => {
        const { manager, port } = withPort(
            () =>
                new ThrottlingRequestManager(
                    { domains: 'all', queueLayout: 'perDomain', clock, respectCrawlDelay: false, sharedClock: store },
                    memoryConfig(),
                ),
        );
        const urls = [0, 1, 2, 3, 4].map((i) => ({ url: `${HOST}/${p}/${i}` }));
        return { manager, port, added: manager.addRequestsBatched(urls, { waitForAllRequestsToBeAdded: true }) };
    };
    test('the next request of any process waits an interval after the send, not after the handout', async () => {
        const clock = new ManualClock(1_700_000_000_000);
        const store = new FileDomainClock(dir, { clock });
        const a = crawlerProcess(clock, store, 1);
        const b = crawlerProcess(clock, store, 2);
        await Promise.all([a.added, b.added]);
        // A learns a pace: two answers, then a refusal with Retry-After: 1.
        for (const status of [200, 200, 429]) {
            const request = (await a.manager.fetchNextRequest())!;
            a.port.departs({ request });
            clock.advance(20);
            await answerRequest(a.manager, request, status, status === 429 ? '1' : undefined);
            clock.advance(100);
        }
        const pace = a.manager.snapshot().find((d) => d.domain === 'shop.example')!.rampup!.rate;
        expect(Number.isFinite(pace)).toBe(true);
        const intervalMs = 1000 / pace;
        clock.advance(1_000);
        // B sends one after the wait, and takes the pace on its way out.
        const first = await nextRequest(b.manager, clock);
        b.port.departs({ request: first });
        clock.advance(20);
        await answerRequest(b.manager, first, 200);
        const request = await nextRequest(a.manager, clock);
        const handoutAt = clock.now();
        // It lags 100 ms in the crawler's hooks and the client's setup, so it reaches the site that late.
        clock.advance(100);
        expect(a.port.departs({ request })).toBe(0);
        clock.advance(20);
        await answerRequest(a.manager, request, 200);
        // B asks from an interval after the handout on: it must not send before an interval after the
        // send, or the site sees its request 100 ms early. (A process held by another's lease asks the
        // shared clock again every 100 ms.)
        clock.set(handoutAt + intervalMs + 30);
        await nextRequest(b.manager, clock);
        expect(clock.now()).toBeGreaterThanOrEqual(handoutAt + 100 + intervalMs);
        expect(clock.now()).toBeLessThanOrEqual(handoutAt + 100 + intervalMs + 110);
    });
});

describe('an answer later than a typical one, one request at a time at a learned pace', () => {
    /** A process with the defaults a user has that learned a pace: two answers in 20 ms, then a refusal. */
    async function learned() {
        const clock = new ManualClock(1_700_000_000_000);
        const manager = new ThrottlingRequestManager(
            { domains: 'all', queueLayout: 'perDomain', clock, respectCrawlDelay: false },
            memoryConfig(),
        );
        const urls = Array.from({ length: 16 }, (_, i) => ({ url: `${HOST}/${i}` }));
        await manager.addRequestsBatched(urls, { waitForAllRequestsToBeAdded: true });
        for (const status of [200, 200, 429]) {
            const request = (await manager.fetchNextRequest())!;
            clock.advance(20);
            await answerRequest(manager, request, status, status === 429 ? '1' : undefined);
            clock.advance(100);
        }
        clock.advance(1_000);
        /**
         * Sends the next request when it may go and answers it `responseMs` later: when it was sent, the
         * interval in force after its dispatch, and when its dispatch armed the next one to go.
         */
        const answerIn = async (responseMs: number) => {
            const request = await nextRequest(manager, clock);
            const sentAt = clock.now();
            const { intervalMs, nextDispatchAt } = manager.snapshot().find((d) => d.domain === 'shop.example')!;
            clock.advance(responseMs);
            await answerRequest(manager, request, 200);
            return { sentAt, intervalMs, armedAt: nextDispatchAt };
        };
        return { manager, answerIn };
    }

    test('by up to the jitter floor: the next request leaves an interval after where it may have arrived', async () => {
        const { manager, answerIn } = await learned();
        await answerIn(20);
        // 25 ms later than the typical one (20 ms): it may have reached the site 25 ms after it left.
        const { sentAt, intervalMs } = await answerIn(45);
        expect(intervalMs).toBeGreaterThan(100);
        expect(await nextReadyAt(manager)).toBe(sentAt + intervalMs + 25);
    });

    test('measured from a typical answer: an ordinary one, slower than the least, moves nothing', async () => {
        const { manager, answerIn } = await learned();
        // The site answers in 30 ms as a rule, once in 20: measured from the least, every ordinary
        // answer would be 10 ms late, and the pace 10 ms slower per request. Once a window without a
        // queue has answered, its median is the typical answer.
        for (const ms of [20, 30, 30, 30, 30, 30, 30, 30]) await answerIn(ms);
        const ordinary = await answerIn(30);
        expect(await nextReadyAt(manager)).toBe(ordinary.armedAt);
        // An answer 25 ms later than the typical 30 still moves the next request by as much.
        const late = await answerIn(55);
        expect(await nextReadyAt(manager)).toBe(late.armedAt + 25);
    });

    test('by more: the site took longer, and the interval still counts from the send', async () => {
        const { manager, answerIn } = await learned();
        await answerIn(20);
        const { sentAt, intervalMs } = await answerIn(120);
        expect(intervalMs).toBeGreaterThan(120);
        expect(await nextReadyAt(manager)).toBe(sentAt + intervalMs);
    });
});
