/**
 * Under the shared layout a held-back request is moved out of `inner` into its key's own queue in
 * two storage writes: the copy is added there, then the original is marked handled in `inner`. A
 * process killed between the two leaves both: the copy in the own queue, and the original locked in
 * `inner` until its lock lapses. The process that takes the crawl up must crawl the page once.
 */
import { Configuration, log, LogLevel, RequestQueue } from '@crawlee/core';
import type { Request } from '@crawlee/core';
import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';

import { DomainRequestQueue } from '../../packages/throttling/src/queues/domain-request-queue';
import { describeRedis, testRedis, uniquePrefix } from '../helpers/redis';
import type { StorageUnderTest } from '../helpers/redis-storage';
import { redisStorage } from '../helpers/redis-storage';

const URLS = ['http://moved.test/1', 'http://moved.test/2', 'http://moved.test/3'];
/** The userData field the move sets on the original right before marking it handled (moved-requests.ts). */
const MOVED_TO = '__crawleeThrottlingMovedTo';
const START = 1_000_000;

// The manager warns about the copy it finds; the tests say what they expect instead.
const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.ERROR));
afterAll(() => log.setLevel(previousLevel));

/** What the locks of a killed process come to once they expire: every locked request under `prefix` is due back. */
async function expireEveryLock(prefix: string): Promise<void> {
    const redis = testRedis();
    try {
        for (const key of await redis.keys(`{${prefix}*:locks`))
            for (const id of await redis.zrange(key, 0, -1)) await redis.zadd(key, 0, id);
    } finally {
        await redis.quit();
    }
}

const machine = (config: Configuration, delaySecs: number, clock: ManualClock) =>
    new ThrottlingRequestManager({ domains: 'all', respectCrawlDelay: false, rampup: false, delaySecs, clock }, config);

/**
 * A process that crawled the first page and was killed in the next fetch, once it had added the copy
 * of a held-back request to the domain's own queue and before it marked the original handled in
 * inner; then its locks expired. Answers the page it crawled.
 */
async function killedInAMove(under: StorageUnderTest, prefix: string): Promise<string> {
    const config = new Configuration({ storageClient: under.client(), purgeOnStart: false });
    const a = machine(config, 10, new ManualClock(START));
    await a.addRequestsBatched(URLS, { waitForAllRequestsToBeAdded: true });
    // The first goes out at once; the domain then waits 10 s, too long for the frontier window,
    // so the next fetch moves the others to the domain's own queue.
    const first = (await a.fetchNextRequest())!;
    await a.markRequestHandled(first);
    const inner = await RequestQueue.open(null, { config });
    const markHandled = inner.markRequestHandled.bind(inner);
    let killedAt: (request: Request) => void;
    const killed = new Promise<Request>((resolve) => (killedAt = resolve));
    inner.markRequestHandled = async (request: Request) => {
        if (!(MOVED_TO in request.userData)) return markHandled(request);
        killedAt(request);
        return new Promise<never>(() => undefined);
    };
    void a.fetchNextRequest();
    expect(URLS).toContain((await killed).url);
    await expireEveryLock(prefix);
    return first.url;
}

/** Fetches and handles until the manager is finished (a minute apart); the URLs it handed out. */
async function crawl(manager: ThrottlingRequestManager, clock: ManualClock): Promise<string[]> {
    const handed: string[] = [];
    for (let i = 0; i < 50 && !(await manager.isFinished()); i++) {
        const request = await manager.fetchNextRequest();
        if (request) {
            handed.push(request.url);
            await manager.markRequestHandled(request);
        }
        clock.advance(60_000);
    }
    expect(await manager.isFinished()).toBe(true);
    return handed;
}

describeRedis('a move into a domain queue cut short by a kill (RedisStorageClient)', () => {
    let prefix: string;
    let under: StorageUnderTest;
    beforeEach(() => {
        prefix = uniquePrefix('rs-moves');
        under = redisStorage(prefix);
    });
    afterEach(() => under.close());

    it('crawls the page once: from its copy in the domain queue, not again from inner', async () => {
        const first = await killedInAMove(under, prefix);
        // The crawl taken up by another process an hour later, on the same storage: the domain is
        // ready, so a request that comes out of inner would go out at once.
        const clock = new ManualClock(START + 3_600_000);
        const b = machine(new Configuration({ storageClient: under.client(), purgeOnStart: false }), 0, clock);
        expect([first, ...(await crawl(b, clock))].sort()).toEqual(URLS);
    });

    it('gives the original back to inner when the domain queue cannot be read for its copy', async () => {
        const first = await killedInAMove(under, prefix);
        const clock = new ManualClock(START + 3_600_000);
        const config = new Configuration({ storageClient: under.client(), purgeOnStart: false });
        const b = machine(config, 0, clock);
        // The manager opens the same instance (Crawlee caches opened queues by name).
        const own = await DomainRequestQueue.open('throttled-moved.test', { config });
        const getRequest = own.getRequest.bind(own);
        own.getRequest = (async (id: string) => {
            own.getRequest = getRequest;
            throw new Error(`the storage failed a read of ${id}`);
        }) as typeof own.getRequest;
        await expect(b.fetchNextRequest()).rejects.toThrow('the storage failed a read');
        // Nothing stays locked to this process: every page is crawled once all the same.
        expect([first, ...(await crawl(b, clock))].sort()).toEqual(URLS);
    });
});
