/**
 * A request whose lock in `inner` ran out while this process still held it (the storage was away
 * for longer than the lock, then came back) is listed by `inner` again. The manager already holds
 * it, handed out or waiting in the frontier window: the second copy must not be crawled.
 */
import { log, LogLevel, Request, RequestQueue } from '@crawlee/core';
import type { IRequestManager } from '@crawlee/core';
import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';

import { memoryConfig } from '../helpers/storage';

// The manager warns once per URL it drops a copy of.
const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.ERROR));
afterAll(() => log.setLevel(previousLevel));

const URLS = ['http://a.example/1', 'http://a.example/2', 'http://a.example/3'];

/** A RequestQueue that, once asked to, hands out a copy of a request it handed out before. */
async function relistingQueue() {
    const queue = await RequestQueue.open(null, { config: memoryConfig() });
    const relist: Request[] = [];
    const handedOut = new Map<string, Request>();
    const fetchNextRequest = queue.fetchNextRequest.bind(queue);
    const isEmpty = queue.isEmpty.bind(queue);
    const isFinished = queue.isFinished.bind(queue);
    const patched = queue as unknown as Pick<IRequestManager, 'fetchNextRequest' | 'isEmpty' | 'isFinished'>;
    patched.isEmpty = async () => relist.length === 0 && isEmpty();
    patched.isFinished = async () => relist.length === 0 && isFinished();
    patched.fetchNextRequest = async () => {
        const request = relist.shift() ?? (await fetchNextRequest());
        if (request) handedOut.set(request.url, request);
        return request;
    };
    /** What the storage does when a lock ran out: the same request (same id) comes out again. */
    const relistCopyOf = (url: string) => {
        const original = handedOut.get(url)!;
        const copy = new Request({ url: original.url, uniqueKey: original.uniqueKey });
        copy.id = original.id;
        relist.push(copy);
    };
    return { queue, relistCopyOf };
}

async function sharedManager(clock: ManualClock, delaySecs: number, concurrency = 2) {
    const { queue, relistCopyOf } = await relistingQueue();
    const manager = new ThrottlingRequestManager(
        { domains: ['a.example'], queueLayout: 'shared', clock, delaySecs, concurrency, rampup: false, inner: queue },
        memoryConfig(),
    );
    await manager.addRequestsBatched(URLS, { waitForAllRequestsToBeAdded: true });
    return { manager, relistCopyOf };
}

async function drain(manager: ThrottlingRequestManager, clock: ManualClock, handed: string[]): Promise<void> {
    for (let i = 0; i < 20 && !(await manager.isFinished()); i++) {
        const request = await manager.fetchNextRequest();
        if (request) {
            handed.push(request.url);
            await manager.markRequestHandled(request);
        } else clock.advance(1_000);
    }
}

describe('a request listed again by inner while this manager holds it', () => {
    test('handed out and not yet handled: the copy is dropped, the next request goes out instead', async () => {
        const clock = new ManualClock();
        const { manager, relistCopyOf } = await sharedManager(clock, 0);
        const first = (await manager.fetchNextRequest())!;
        expect(first.url).toBe(URLS[0]);
        relistCopyOf(URLS[0]);

        const second = (await manager.fetchNextRequest())!;
        expect(second.url).toBe(URLS[1]);
        await manager.markRequestHandled(first);
        await manager.markRequestHandled(second);
        const handed = [first.url, second.url];
        await drain(manager, clock, handed);
        expect(handed).toEqual(URLS);
    });

    test('waiting in the frontier window: the copy is not filed or handed out a second time', async () => {
        const clock = new ManualClock();
        const { manager, relistCopyOf } = await sharedManager(clock, 1, 10);
        const first = (await manager.fetchNextRequest())!;
        await manager.markRequestHandled(first);
        // The domain waits a second: the next request is taken from inner into the window.
        expect(await manager.fetchNextRequest()).toBeNull();
        relistCopyOf(URLS[1]);

        // Each goes out and stays in flight (a crawler still at work on it) while the next ones come.
        const inFlight: Request[] = [];
        for (let i = 0; i < 10; i++) {
            clock.advance(1_000);
            const request = await manager.fetchNextRequest();
            if (request) inFlight.push(request);
        }
        expect([first, ...inFlight].map((r) => r.url)).toEqual(URLS);
        for (const request of inFlight) await manager.markRequestHandled(request);
        expect(await manager.isFinished()).toBe(true);
    });
});
