import type { Request, RequestQueue } from '@crawlee/core';
import { Configuration, KeyValueStore } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';

import { ManualClock, ThrottlingOptionsError, ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { DomainRequestQueue } from '../../packages/throttling/src/queues/domain-request-queue';
import { memoryConfig } from '../helpers/storage';
import { withPort } from '../helpers/throttler-port';

/** Lets promise callbacks (a settled gate, a queue write) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function setup(options: Partial<ThrottlingRequestManagerOptions> = {}) {
    const clock = new ManualClock();
    const config = memoryConfig();
    const opened: string[] = [];
    const manager = new ThrottlingRequestManager(
        {
            domains: 'all',
            queueLayout: 'shared',
            clock,
            requestManagerOpener: async (name, opts) => {
                opened.push(name);
                return DomainRequestQueue.open(name, opts);
            },
            ...options,
        },
        config,
    );
    return { clock, config, manager, opened };
}

/** {@link setup}, with the port the crawler integration would be handed. */
function setupWithPort(options: Partial<ThrottlingRequestManagerOptions> = {}) {
    let made: ReturnType<typeof setup> | undefined;
    const { port } = withPort(() => (made = setup(options)).manager);
    return { ...made!, port };
}

const add = async (manager: ThrottlingRequestManager, urls: string[]) => {
    for (const url of urls) await manager.addRequest({ url });
};
const urls = (host: string, count: number) => Array.from({ length: count }, (_, i) => `https://${host}/${i + 1}`);
const queuedOf = (manager: ThrottlingRequestManager, key: string) =>
    manager.snapshot().find((s) => s.domain === key)?.queued;
const domainsOf = (manager: ThrottlingRequestManager) => manager.snapshot().map((s) => s.domain);

/** Fetches and marks handled, advancing the clock by `stepMs` after each empty fetch, until `count` went out. */
async function drain(manager: ThrottlingRequestManager, clock: ManualClock, count: number, stepMs = 1_000) {
    const out: string[] = [];
    for (let tries = 0; out.length < count && tries < 10 * count + 100; tries++) {
        const request = await manager.fetchNextRequest();
        if (!request) {
            clock.advance(stepMs);
            continue;
        }
        out.push(request.url);
        await manager.markRequestHandled(request);
    }
    return out;
}

describe("queueLayout 'shared': options", () => {
    test('defaults: shared under domains: all (10,000 kept, a window of 1,000 and 10 per domain); perDomain with 100 for a list', () => {
        const perDomain = new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain' }).options;
        expect([perDomain.queueLayout, perDomain.maxThrottledDomains]).toEqual(['perDomain', 100]);
        const listed = new ThrottlingRequestManager({ domains: ['a.com'] }).options;
        expect([listed.queueLayout, listed.maxThrottledDomains]).toEqual(['perDomain', 100]);
        const shared = new ThrottlingRequestManager({ domains: 'all' }).options;
        expect(shared).toMatchObject({
            queueLayout: 'shared',
            maxThrottledDomains: 10_000,
            frontierWindow: 1_000,
            frontierWindowPerDomain: 10,
        });
        // A window smaller than the per-domain default caps the share.
        const small = new ThrottlingRequestManager({ domains: 'all', queueLayout: 'shared', frontierWindow: 4 });
        expect(small.options.frontierWindowPerDomain).toBe(4);
    });

    test("a storage shared live by several processes gets 'shared' under domains: all, one per domain in the window", () => {
        // A windowed request is locked in one process's memory: there each holds one per domain.
        const storageClient = Object.assign(new MemoryStorage({ persistStorage: false }), {
            sharesQueuesAcrossProcesses: true,
        });
        const config = new Configuration({ storageClient });
        const shared = new ThrottlingRequestManager({ domains: 'all' }, config).options;
        expect(shared.queueLayout).toBe('shared');
        expect(shared.frontierWindowPerDomain).toBe(1);
        expect(
            new ThrottlingRequestManager({ domains: 'all', frontierWindowPerDomain: 5 }, config).options
                .frontierWindowPerDomain,
        ).toBe(5);
        expect(new ThrottlingRequestManager({ domains: ['a.test'] }, config).options.queueLayout).toBe('perDomain');
        const local = new ThrottlingRequestManager({ domains: 'all' }, memoryConfig()).options;
        expect(local.queueLayout).toBe('shared');
        expect(local.frontierWindowPerDomain).toBe(10);
    });

    test.each([
        [{ queueLayout: 'sharded' }, "`queueLayout`: queueLayout must be 'perDomain' or 'shared'"],
        [
            { queueLayout: 'perDomain', frontierWindow: 50 },
            "`frontierWindow` applies only to queueLayout: 'shared' (queueLayout is 'perDomain')",
        ],
        [
            { queueLayout: 'perDomain', frontierWindowPerDomain: 2 },
            "`frontierWindowPerDomain` applies only to queueLayout: 'shared'",
        ],
        [{ queueLayout: 'shared', frontierWindow: 0 }, 'frontierWindow must be a whole number >= 1'],
        [{ queueLayout: 'shared', frontierWindow: 2.5 }, 'frontierWindow must be a whole number >= 1'],
        [{ queueLayout: 'shared', frontierWindowPerDomain: 0 }, 'frontierWindowPerDomain must be a whole number >= 1'],
        [
            { queueLayout: 'shared', frontierWindow: 5, frontierWindowPerDomain: 6 },
            '`frontierWindowPerDomain` (6) must not exceed `frontierWindow` (5)',
        ],
    ])('%j is refused with a message naming the option', (options, message) => {
        const build = () => new ThrottlingRequestManager({ domains: 'all', ...(options as object) });
        expect(build).toThrow(ThrottlingOptionsError);
        expect(build).toThrow(message);
    });
});

describe("queueLayout 'shared': requests stay in inner", () => {
    test('no throttled-<domain> queue is opened for domains whose requests fit the window', async () => {
        const { manager, clock, opened } = setup();
        await add(manager, ['https://a.com/1', 'https://b.com/1', 'https://a.com/2']);
        expect(manager.innerManager!.getTotalCount()).toBe(3);
        expect(manager.getTotalCount()).toBe(3);
        expect(await drain(manager, clock, 3)).toHaveLength(3);
        expect(opened).toEqual([]);
        expect(await manager.handledCount()).toBe(3);
        expect(await manager.isFinished()).toBe(true);
    });

    test('addRequestsBatched goes to inner as one batch, duplicates included', async () => {
        const { manager, opened } = setup();
        const result = await manager.addRequestsBatched(['https://a.com/1', 'https://b.com/1', 'https://a.com/1']);
        expect(result.addedRequests.filter((r) => !r.wasAlreadyPresent)).toHaveLength(2);
        expect(manager.innerManager!.getTotalCount()).toBe(2);
        expect(opened).toEqual([]);
    });

    test('a listed domain is throttled and an unlisted one is served as it is, both from inner', async () => {
        const { manager, clock, opened } = setup({ domains: ['a.com'], delaySecs: 5 });
        await add(manager, ['https://a.com/1', 'https://a.com/2', 'https://b.com/1', 'https://b.com/2']);
        const first = await drain(manager, clock, 4, 0);
        // a.com's second request waits for its pace; b.com is not paced.
        expect(first).toEqual(['https://a.com/1', 'https://b.com/1', 'https://b.com/2']);
        clock.advance(5_000);
        expect(await drain(manager, clock, 1)).toEqual(['https://a.com/2']);
        expect(opened).toEqual([]);
        expect(domainsOf(manager)).toEqual(['a.com']);
    });
});

describe("queueLayout 'shared': the frontier window", () => {
    test("a domain's requests wait in the window at its pace, oldest first", async () => {
        const { manager, clock } = setup({ delaySecs: 1 });
        await add(manager, urls('a.com', 5));
        const first = await manager.fetchNextRequest();
        expect(first?.url).toBe('https://a.com/1');
        await manager.markRequestHandled(first!);
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(queuedOf(manager, 'a.com')).toBe(4);
        // Held by its clock, the rest is not servable: the crawler's pool waits instead of spinning.
        expect(await manager.isEmpty()).toBe(true);
        clock.advance(1_000);
        expect(await drain(manager, clock, 4)).toEqual(urls('a.com', 5).slice(1));
        expect(await manager.isFinished()).toBe(true);
    });

    test('a full window takes nothing more from inner: isEmpty is true while no domain in it is ready', async () => {
        const { manager, clock } = setup({ delaySecs: 2, frontierWindow: 3, frontierWindowPerDomain: 3 });
        await add(manager, [...urls('a.com', 6), 'https://b.com/1']);
        const first = (await manager.fetchNextRequest())!;
        expect(first.url).toBe('https://a.com/1');
        await manager.markRequestHandled(first);
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(queuedOf(manager, 'a.com')).toBe(3);
        // b.com is still in inner, unseen: the window is full of a.com's requests.
        expect(domainsOf(manager)).toEqual(['a.com']);
        expect(await manager.isEmpty()).toBe(true);
        expect(await manager.checkReadiness()).toMatchObject({ kind: 'waiting' });
        clock.advance(2_000);
        expect((await manager.fetchNextRequest())?.url).toBe('https://a.com/2');
    });

    test("past its share of the window a domain's requests move to a queue of its own, so others are not held up", async () => {
        const { manager, clock, opened } = setup({ delaySecs: 2, frontierWindow: 3, frontierWindowPerDomain: 2 });
        await add(manager, [...urls('a.com', 6), 'https://b.com/1']);
        const first = (await manager.fetchNextRequest())!;
        expect(first.url).toBe('https://a.com/1');
        await manager.markRequestHandled(first);
        // a.com/2 and /3 wait in the window, /4 to /6 move to throttled-a.com, and b.com goes out.
        const other = (await manager.fetchNextRequest())!;
        expect(other.url).toBe('https://b.com/1');
        await manager.markRequestHandled(other);
        expect(opened).toEqual(['throttled-a.com']);
        expect(queuedOf(manager, 'a.com')).toBe(5);
        const rest = await drain(manager, clock, 5, 2_000);
        expect(rest).toEqual(urls('a.com', 6).slice(1));
        // Moved requests are handled in their queue; the originals count once.
        expect(await manager.handledCount()).toBe(7);
        expect(manager.getTotalCount()).toBe(7);
        expect(await manager.isFinished()).toBe(true);
    });

    test('a domain that will not be ready soon (a long crawl delay) waits in a queue of its own, not in the window', async () => {
        const { manager, clock, opened } = setup({ delaySecs: 10 });
        await add(manager, [...urls('a.com', 3), 'https://b.com/1']);
        await manager.markRequestHandled((await manager.fetchNextRequest())!);
        expect((await manager.fetchNextRequest())?.url).toBe('https://b.com/1');
        expect(opened).toEqual(['throttled-a.com']);
        expect(queuedOf(manager, 'a.com')).toBe(2);
        clock.advance(10_000);
        expect(await drain(manager, clock, 2, 10_000)).toEqual(urls('a.com', 3).slice(1));
    });

    test('a full window whose domains came to wait long (a backoff) moves their lines to their own queues', async () => {
        const { manager, clock, opened } = setup({ delaySecs: 1, frontierWindow: 4, frontierWindowPerDomain: 2 });
        await add(manager, [...urls('a.com', 3), ...urls('b.com', 3), 'https://c.com/1']);
        const inFlight: Request[] = [];
        for (let i = 0; i < 2; i++) inFlight.push((await manager.fetchNextRequest())!);
        expect(inFlight.map((r) => r.url)).toEqual(['https://a.com/1', 'https://b.com/1']);
        // a.com/2-3 and b.com/2-3 wait in the window (their domains' slots are busy): it is full.
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(domainsOf(manager)).not.toContain('c.com');
        expect(opened).toEqual([]);
        // Both domains refuse: 30 s backoffs. Their lines wait long now and leave the window.
        for (const request of inFlight) {
            manager.recordPacingSignal({ reason: 'rateLimited', url: request.url, waitMs: 30_000 });
            await manager.markRequestHandled(request);
        }
        clock.advance(1_000);
        expect(await manager.isEmpty()).toBe(false);
        const other = (await manager.fetchNextRequest())!;
        expect(other.url).toBe('https://c.com/1');
        await manager.markRequestHandled(other);
        expect(opened.sort()).toEqual(['throttled-a.com', 'throttled-b.com']);
        expect([queuedOf(manager, 'a.com'), queuedOf(manager, 'b.com')]).toEqual([2, 2]);
        clock.advance(30_000);
        expect((await drain(manager, clock, 4, 1_000)).sort()).toEqual(
            [...urls('a.com', 3).slice(1), ...urls('b.com', 3).slice(1)].sort(),
        );
        expect(await manager.handledCount()).toBe(7);
        expect(await manager.isFinished()).toBe(true);
    });

    test('a windowed request the crawler reclaims goes back to inner and is served again', async () => {
        const { manager, clock } = setup({ delaySecs: 1 });
        await add(manager, urls('a.com', 2));
        await manager.markRequestHandled((await manager.fetchNextRequest())!);
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(1_000);
        const second = (await manager.fetchNextRequest())!;
        expect(second.url).toBe('https://a.com/2');
        second.retryCount += 1;
        await manager.reclaimRequest(second);
        // Stored in inner again (with its retry count), not counted as waiting in the window.
        expect(queuedOf(manager, 'a.com')).toBe(0);
        clock.advance(1_000);
        const again = (await manager.fetchNextRequest())!;
        expect([again.url, again.retryCount]).toEqual(['https://a.com/2', 1]);
        await manager.markRequestHandled(again);
        expect(await manager.isFinished()).toBe(true);
        expect(await manager.handledCount()).toBe(2);
    });

    test('a windowed request whose lock is lost (handled elsewhere) is not handed out', async () => {
        const { manager, clock } = setup({ delaySecs: 1 });
        await add(manager, ['https://a.com/1']);
        const { requestId } = await manager.addRequest({ url: 'https://a.com/2' });
        await manager.markRequestHandled((await manager.fetchNextRequest())!);
        expect(await manager.fetchNextRequest()).toBeNull();
        // Another client of inner handles a.com/2 while it waits in our window.
        const inner = manager.innerManager as RequestQueue;
        const stored = (await inner.client.getRequest(requestId)) as { id: string; url: string; uniqueKey: string };
        await inner.client.updateRequest({ ...stored, handledAt: new Date().toISOString() });
        clock.advance(1_000);
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(queuedOf(manager, 'a.com')).toBe(0);
        expect(await manager.isFinished()).toBe(true);
    });

    test('an origin check due at dispatch holds a windowed request in the window, not in a queue', async () => {
        const { manager, clock, opened, port } = setupWithPort({ delaySecs: 1 });
        const pending: (() => void)[] = [];
        port.setDomainGate(() => new Promise<void>((resolve) => pending.push(resolve)));
        await add(manager, urls('a.com', 2));
        // Met when fetched from inner: its robots check starts, and both requests wait in the window.
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(pending).toHaveLength(1);
        expect(queuedOf(manager, 'a.com')).toBe(2);
        pending.shift()!();
        await settle();
        clock.advance(1_000);
        expect(await drain(manager, clock, 2)).toEqual(urls('a.com', 2));
        expect(opened).toEqual([]);
    });

    test('purge gives the windowed requests back to inner, unlocked', async () => {
        const { manager } = setup({ delaySecs: 2 });
        await add(manager, urls('a.com', 3));
        await manager.markRequestHandled((await manager.fetchNextRequest())!);
        expect(await manager.fetchNextRequest()).toBeNull();
        await manager.purge();
        const inner = manager.innerManager!;
        const back = [await inner.fetchNextRequest(), await inner.fetchNextRequest()].map((r) => r?.url).sort();
        expect(back).toEqual(['https://a.com/2', 'https://a.com/3']);
    });

    test('the saved record lists only the domains that have a queue of their own', async () => {
        const { manager, clock, config } = setup({ delaySecs: 2, frontierWindow: 2, frontierWindowPerDomain: 1 });
        await add(manager, [...urls('a.com', 3), 'https://b.com/1', 'https://c.com/1']);
        // a.com/1, b.com and c.com go out; a.com/2 waits in the window, a.com/3 in throttled-a.com.
        expect(await drain(manager, clock, 3, 0)).toEqual(['https://a.com/1', 'https://b.com/1', 'https://c.com/1']);
        await manager.persistState();
        const store = await KeyValueStore.open(null, { config });
        const record = (await store.getValue('CRAWLEE_THROTTLED_DOMAINS')) as { domains: string[]; states: object };
        expect(record.domains).toEqual(['a.com']);
        expect(Object.keys(record.states).sort()).toEqual(['a.com', 'b.com', 'c.com']);
    });
});

describe("queueLayout 'shared': idle domains are evicted past maxThrottledDomains", () => {
    test('the least recently used idle domains are forgotten instead of throwing', async () => {
        const { manager, clock } = setup({ maxThrottledDomains: 3 });
        const added: string[] = [];
        manager.on('domainAdded', ({ domain }) => added.push(domain));
        const hosts = Array.from({ length: 10 }, (_, i) => `d${i}.com`);
        await add(
            manager,
            hosts.map((h) => `https://${h}/1`),
        );
        expect(await drain(manager, clock, 10)).toHaveLength(10);
        expect(domainsOf(manager)).toEqual(['d7.com', 'd8.com', 'd9.com']);
        // Met again after eviction: a new domain, with fresh state.
        await add(manager, ['https://d0.com/2']);
        await drain(manager, clock, 1);
        expect(added.filter((d) => d === 'd0.com')).toHaveLength(2);
        expect(domainsOf(manager)).toHaveLength(3);
    });

    test("domains that come to rest later are evicted by the crawler's polls, when no new domain comes", async () => {
        const { manager, clock } = setup({ maxThrottledDomains: 2, delaySecs: 1 });
        await add(
            manager,
            ['a', 'b', 'c', 'd'].map((h) => `https://${h}.com/1`),
        );
        expect(await drain(manager, clock, 4, 0)).toHaveLength(4);
        // Each was met while the others' crawl delays ran: none was at rest to make room.
        expect(domainsOf(manager)).toHaveLength(4);
        // Not yet: their crawl delays still run.
        await manager.isEmpty();
        expect(domainsOf(manager)).toHaveLength(4);
        clock.advance(1_000);
        await manager.isEmpty();
        expect(domainsOf(manager)).toHaveLength(2);
    });

    test('a domain backing off, or with raised pacing, is kept until it is at rest', async () => {
        const { manager, clock } = setup({ maxThrottledDomains: 2 });
        await add(manager, ['https://x.com/1']);
        const refused = (await manager.fetchNextRequest())!;
        manager.recordPacingSignal({ reason: 'rateLimited', url: refused.url, waitMs: 5_000 });
        await manager.markRequestHandled(refused);
        for (const host of ['d1.com', 'd2.com', 'd3.com']) {
            await add(manager, [`https://${host}/1`]);
            await drain(manager, clock, 1, 0);
        }
        expect(domainsOf(manager)).toContain('x.com');
        // Two minutes on, its backoff and anything it raised have long lapsed: it is at rest.
        clock.advance(121_000);
        await add(manager, ['https://d4.com/1']);
        await drain(manager, clock, 1, 0);
        expect(domainsOf(manager)).not.toContain('x.com');
        expect(domainsOf(manager).length).toBeLessThanOrEqual(2);
    });

    test('a domain with requests waiting or in flight is never evicted; configured scopes are kept', async () => {
        const { manager, clock } = setup({ maxThrottledDomains: 1, scopes: { 'keep.com': { delaySecs: 0 } } });
        await add(manager, ['https://keep.com/1', 'https://busy.com/1']);
        await drain(manager, clock, 1, 0);
        const inFlight = (await manager.fetchNextRequest())!;
        expect(inFlight.url).toBe('https://busy.com/1');
        for (const host of ['d1.com', 'd2.com']) {
            await add(manager, [`https://${host}/1`]);
            await drain(manager, clock, 1, 0);
        }
        expect(domainsOf(manager)).toEqual(expect.arrayContaining(['keep.com', 'busy.com']));
        await manager.markRequestHandled(inFlight);
        await add(manager, ['https://d3.com/1']);
        await drain(manager, clock, 1, 0);
        expect(domainsOf(manager)).toContain('keep.com');
        expect(domainsOf(manager)).not.toContain('busy.com');
    });

    test("an evicted key met again is paced by what its origins' robots.txt say now, not by an origin read before", async () => {
        const { manager, clock } = setup({ maxThrottledDomains: 1, throttleBy: 'registrableDomain' });
        const crawlDelayOf = (key: string) => manager.snapshot().find((s) => s.domain === key)?.crawlDelayMs;
        await add(manager, ['https://a.x.com/1']);
        manager.recordPacingSignal({ reason: 'minInterval', url: 'https://a.x.com/robots.txt', intervalMs: 3_000 });
        expect(await drain(manager, clock, 1, 0)).toHaveLength(1);
        clock.advance(3_000);
        await add(manager, ['https://d1.com/1']);
        await drain(manager, clock, 1, 0);
        expect(domainsOf(manager)).not.toContain('x.com');
        await add(manager, ['https://b.x.com/1']);
        manager.recordPacingSignal({ reason: 'minInterval', url: 'https://b.x.com/robots.txt', intervalMs: 500 });
        expect(crawlDelayOf('x.com')).toBe(500);
    });
});

describe("queueLayout 'perDomain' is unchanged", () => {
    test('requests go to throttled-<domain> queues, and the domain limit still throws', async () => {
        const opened: string[] = [];
        const manager = new ThrottlingRequestManager(
            {
                domains: 'all',
                queueLayout: 'perDomain',
                maxThrottledDomains: 1,
                clock: new ManualClock(),
                requestManagerOpener: async (name, opts) => {
                    opened.push(name);
                    return DomainRequestQueue.open(name, opts);
                },
            },
            memoryConfig(),
        );
        await manager.addRequest({ url: 'https://a.com/1' });
        expect(opened).toEqual(['throttled-a.com']);
        await expect(manager.addRequest({ url: 'https://b.com/1' })).rejects.toThrow(/maxThrottledDomains \(1\)/);
        const fetched: Request | null = await manager.fetchNextRequest();
        expect(fetched?.url).toBe('https://a.com/1');
    });
});
