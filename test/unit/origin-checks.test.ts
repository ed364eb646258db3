import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { applyRobotsVerdict } from '../../packages/throttling/src/integration/crawler-integration';
import { memoryConfig } from '../helpers/storage';
import { withPort } from '../helpers/throttler-port';
import type { ThrottlerPort } from '../../packages/throttling/src/orchestration/throttler-port';

const DAY = 24 * 60 * 60 * 1000;

/** Lets promise callbacks (a settled gate, a queue write) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A domain gate whose checks the test settles by hand, recording the origin each one was for. */
function manualGate(
    { manager, port }: { manager: ThrottlingRequestManager; port: ThrottlerPort },
    recheckAfterMs?: number,
) {
    const pending: { url: string; resolve: () => void }[] = [];
    const checked: string[] = [];
    port.setDomainGate(
        (_key, url) =>
            new Promise<void>((resolve) => {
                checked.push(new URL(url).origin);
                pending.push({ url, resolve });
            }),
        { recheckAfterMs },
    );
    /** Settles every check that is running; `delayMsOf` says what each origin's robots.txt declared. */
    const answer = async (delayMsOf: (origin: string) => number) => {
        for (const { url, resolve } of pending.splice(0)) {
            manager.recordPacingSignal({ reason: 'minInterval', url, intervalMs: delayMsOf(new URL(url).origin) });
            resolve();
        }
        await settle();
    };
    return { checked, answer, running: () => pending.length };
}

function setup(options: Partial<ThrottlingRequestManagerOptions> = {}) {
    const clock = new ManualClock(1_700_000_000_000);
    const { manager, port } = withPort(
        () =>
            new ThrottlingRequestManager(
                { domains: 'all', queueLayout: 'perDomain', clock, ...options },
                memoryConfig(),
            ),
    );
    return { clock, manager, port };
}

const snap = (manager: ThrottlingRequestManager, key: string) => manager.snapshot().find((s) => s.domain === key);

describe('origin checks (robots.txt) per origin, re-read when stale', () => {
    test("under registrableDomain every origin of a key is checked, one at a time at the key's pace, and the key is paced by the largest delay", async () => {
        const { manager, clock, port } = setup({ throttleBy: 'registrableDomain' });
        const gate = manualGate({ manager, port });
        await manager.addRequest({ url: 'https://a.example.com/1' });
        await manager.addRequest({ url: 'https://b.example.com/1' });
        await manager.addRequest({ url: 'https://a.example.com/2' });

        // robots.txt requests obey the key's concurrency (1 by default) like any other request.
        expect(gate.checked).toEqual(['https://a.example.com']);
        // Held while its origins are being checked.
        expect(await manager.fetchNextRequest()).toBeNull();
        await gate.answer(() => 500);
        expect(gate.checked).toEqual(['https://a.example.com']);
        // ...and its interval: the next origin's robots.txt waits the crawl delay the first declared.
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(gate.checked).toHaveLength(1);
        clock.advance(500);
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(gate.checked).toEqual(['https://a.example.com', 'https://b.example.com']);
        await gate.answer(() => 2_000);

        expect(snap(manager, 'example.com')).toMatchObject({ crawlDelayMs: 2_000, intervalMs: 2_000 });
        clock.advance(2_000);
        expect(await manager.fetchNextRequest()).not.toBeNull();
    });

    test("robots.txt checks of many subdomains take the key's slots: never more in flight than its concurrency", async () => {
        const { manager, clock, port } = setup({ throttleBy: 'registrableDomain', concurrency: 2 });
        const gate = manualGate({ manager, port });
        for (let i = 0; i < 6; i++) await manager.addRequest({ url: `https://s${i}.example.com/1` });
        expect(gate.running()).toBe(2);
        expect(snap(manager, 'example.com')).toMatchObject({ inFlight: 2, dispatched: 0 });
        let most = 0;
        for (let round = 0; round < 6 && gate.checked.length < 6; round++) {
            await gate.answer(() => 0);
            clock.advance(1);
            await manager.fetchNextRequest();
            most = Math.max(most, gate.running());
        }
        expect(gate.checked).toHaveLength(6);
        expect(most).toBeLessThanOrEqual(2);
    });

    test('an origin first met at dispatch time (the head of a restored queue) is checked before its request goes out', async () => {
        const { manager, port } = setup({ throttleBy: 'registrableDomain' });
        await manager.addRequest({ url: 'https://c.example.com/1' });
        // The gate arrives after the request was queued, as for a queue restored from an earlier run.
        const gate = manualGate({ manager, port });

        expect(await manager.fetchNextRequest()).toBeNull();
        expect(gate.checked).toEqual(['https://c.example.com']);
        await gate.answer(() => 0);
        expect((await manager.fetchNextRequest())?.url).toBe('https://c.example.com/1');
        expect(gate.checked).toHaveLength(1);
    });

    test('a check older than recheckAfterMs runs again before the next request, and its answer replaces the old delay', async () => {
        const { manager, clock, port } = setup();
        const gate = manualGate({ manager, port }, DAY);
        for (let i = 0; i < 4; i++) await manager.addRequest({ url: `https://a.com/${i}` });
        await gate.answer(() => 1_000);
        // The robots.txt request itself opened the crawl-delay window.
        clock.advance(1_000);
        const first = await manager.fetchNextRequest();
        await manager.markRequestHandled(first!);
        expect(snap(manager, 'a.com')).toMatchObject({ crawlDelayMs: 1_000 });

        // Within the day: no new check.
        clock.advance(1_000);
        const second = await manager.fetchNextRequest();
        expect(second).not.toBeNull();
        await manager.markRequestHandled(second!);
        expect(gate.checked).toHaveLength(1);

        // A day after the answer: the next request waits for a fresh read.
        clock.advance(DAY);
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(gate.checked).toHaveLength(2);
        expect(gate.running()).toBe(1);
        // The site dropped its Crawl-delay: the key is no longer held to it.
        await gate.answer(() => 0);
        expect(snap(manager, 'a.com')).toMatchObject({ crawlDelayMs: 0 });
        // The re-read went out under the old delay, whose window it opened.
        clock.advance(1_000);
        const third = await manager.fetchNextRequest();
        expect(third).not.toBeNull();
        await manager.markRequestHandled(third!);
        expect(await manager.fetchNextRequest()).not.toBeNull();
        expect(gate.checked).toHaveLength(2);
    });

    test('without recheckAfterMs an origin is checked once per process', async () => {
        const { manager, clock, port } = setup();
        const gate = manualGate({ manager, port });
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.addRequest({ url: 'https://a.com/2' });
        await gate.answer(() => 0);
        await manager.markRequestHandled((await manager.fetchNextRequest())!);
        clock.advance(10 * DAY);
        expect(await manager.fetchNextRequest()).not.toBeNull();
        expect(gate.checked).toHaveLength(1);
    });

    test('a re-read that finds no Crawl-delay (or no file) clears it; a server error or no answer keeps the last good value', () => {
        const { manager, port } = setup();
        const url = 'https://a.com/robots-check';
        applyRobotsVerdict(port, url, { kind: 'crawlDelay', delayMs: 3_000, capped: false, declaredSecs: 3 });
        expect(snap(manager, 'a.com')?.crawlDelayMs).toBe(3_000);

        applyRobotsVerdict(port, url, { kind: 'none', reason: 'server-error' });
        expect(snap(manager, 'a.com')?.crawlDelayMs).toBe(3_000);
        applyRobotsVerdict(port, url, { kind: 'none', reason: 'unreachable' });
        expect(snap(manager, 'a.com')?.crawlDelayMs).toBe(3_000);

        applyRobotsVerdict(port, url, { kind: 'none', reason: 'missing' });
        expect(snap(manager, 'a.com')?.crawlDelayMs).toBe(0);

        applyRobotsVerdict(port, url, { kind: 'crawlDelay', delayMs: 2_000, capped: false, declaredSecs: 2 });
        applyRobotsVerdict(port, url, { kind: 'none', reason: 'no-crawl-delay' });
        expect(snap(manager, 'a.com')?.crawlDelayMs).toBe(0);
    });
});

describe("origin checks that learned nothing ('retry')", () => {
    test('are run once more before the next request, then count as done', async () => {
        const clock = new ManualClock(1_700_000_000_000);
        const { manager, port } = withPort(
            () => new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain', clock }, memoryConfig()),
        );
        const outcomes: ('retry' | undefined)[] = ['retry', 'retry'];
        let calls = 0;
        port.setDomainGate(async () => {
            calls += 1;
            return outcomes.shift();
        });
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.addRequest({ url: 'https://a.com/2' });
        await settle();
        expect(calls).toBe(1);

        // The next request waits for a second check; its 'retry' is not honoured again.
        expect(await manager.fetchNextRequest()).toBeNull();
        await settle();
        expect(calls).toBe(2);
        const first = await manager.fetchNextRequest();
        expect(first).not.toBeNull();
        await manager.markRequestHandled(first!);
        expect(await manager.fetchNextRequest()).not.toBeNull();
        expect(calls).toBe(2);
    });
});
