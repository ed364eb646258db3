import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import { RedisStorageClient, RedisUnavailableError } from 'crawlee-throttling/redis';

import type { FrontierWorker } from '../helpers/frontier-workers';
import { countUrls, startFrontierWorker, whenHandled } from '../helpers/frontier-workers';
import { OwnRedis, describeOwnRedis } from '../helpers/redis-server';

const HOSTS = ['a.example', 'b.example', 'c.example'];
const PAGES = 10;
const allPages = (web: PoliteWeb) =>
    HOSTS.flatMap((host) => [
        web.url(host, '/'),
        ...Array.from({ length: PAGES }, (_, i) => web.url(host, `/page/${i}`)),
    ]);

/**
 * A real CheerioCrawler process on a RedisStorageClient (and RedisDomainClock) whose Redis, a
 * redis-server of the test's own on a free port, is killed mid-crawl and started again. The
 * storage calls wait for Redis to come back (outageMs): with its data kept (AOF) the crawl goes
 * on and loses nothing; with nothing kept it ends with an error saying the frontier was lost;
 * when Redis stays away longer than outageMs it ends with an error saying so, and the same crawl
 * started again finishes what is left.
 */
describeOwnRedis('a crawl on RedisStorageClient when Redis restarts', () => {
    let web: PoliteWeb;
    let redis: OwnRedis | undefined;
    let workers: FrontierWorker[];

    beforeEach(async () => {
        web = await startPoliteWeb({
            sites: HOSTS.map((host) => ({
                host,
                pages: PAGES,
                latencyMs: 150,
                crossLinks: HOSTS.filter((h) => h !== host),
            })),
        });
        workers = [];
    });
    afterEach(async () => {
        for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
        await web.close();
        await redis?.close();
        redis = undefined;
    });

    const start = (label: string, storageOptions: Record<string, unknown> = {}, delaySecs = 0.1) => {
        const worker = startFrontierWorker(label, {
            CRAWL_URLS: JSON.stringify(HOSTS.map((h) => web.url(h, '/'))),
            CRAWL_PROXY_URL: web.proxyUrl,
            CRAWL_DELAY_SECS: String(delaySecs),
            CRAWL_LOCK_SECS: '5',
            // Longer than the outages imposed here: a handler waiting on storage that times out is
            // retried while its first run goes on, and the page is handled twice.
            CRAWL_HANDLER_TIMEOUT_SECS: '30',
            CRAWL_STORAGE_OPTIONS: JSON.stringify(storageOptions),
            REDIS_URL: redis!.url,
            REDIS_KEY_PREFIX: 'restart-test',
        });
        workers.push(worker);
        return worker;
    };
    /** Kills Redis after `worker` handled `pages`, and starts it again `downMs` later. */
    const restartRedisAfter = async (worker: FrontierWorker, pages: number, downMs: number) => {
        await whenHandled(worker, pages);
        await redis!.kill();
        const handledWhileUp = worker.handled.length;
        await new Promise((resolve) => setTimeout(resolve, downMs));
        await redis!.start();
        return handledWhileUp;
    };
    const pageHits = () => web.log.filter((e) => e.path !== '/robots.txt').length;

    it('rides through a restart that keeps the data (AOF): the crawl finishes, nothing lost or crawled twice', async () => {
        redis = await OwnRedis.start({ appendonly: true });
        const worker = start('1');
        // Longer than Crawlee's own retries of a failed add or mark-handled (3 attempts, 1 s apart).
        await restartRedisAfter(worker, 5, 5_000);
        const end = await worker.exited;
        expect(end).toMatchObject({ code: 0 });
        expect(end.log).not.toMatch(/isTaskReadyFunction failed|will be skipped/);
        expect(end.log).toContain('RESULT {"handled":33,"failed":0}');
        const counts = countUrls(worker.handled);
        expect([...counts.keys()].sort()).toEqual(allPages(web).sort());
        expect([...counts].filter(([, n]) => n > 1)).toEqual([]);
        expect(pageHits()).toBe(allPages(web).length);
    }, 90_000);

    it('ends with an error naming the lost frontier when Redis comes back empty, without spinning', async () => {
        redis = await OwnRedis.start({ appendonly: false });
        const worker = start('1');
        await restartRedisAfter(worker, 5, 2_000);
        const restartedAt = Date.now();
        const hitsAtRestart = pageHits();
        const end = await worker.exited;
        expect(end.code).toBe(1);
        expect(end.log).toMatch(/does not exist \(it was there before: .*Redis restarted without persistence/);
        expect(end.log).not.toContain('RESULT');
        // It stopped soon after Redis came back, and did not go on crawling from a fresh frontier.
        expect(Date.now() - restartedAt).toBeLessThan(15_000);
        expect(pageHits() - hitsAtRestart).toBeLessThanOrEqual(4);
    }, 90_000);

    it('ends with a clear error when Redis stays away longer than outageMs; started again, it finishes the rest', async () => {
        redis = await OwnRedis.start({ appendonly: true });
        // Paced so that the pages left after the fifth take seconds: a crawl that ends before Redis
        // goes away (a loaded machine is slow to see the fifth page) would never meet the outage.
        const first = start('first', { outageMs: 1_000 }, 0.5);
        const downAt = Date.now();
        await restartRedisAfter(first, 5, 4_000);
        const end = await first.exited;
        expect(end.code).toBe(1);
        expect(end.log).toMatch(/Redis did not answer for 1000 ms \(outageMs\)/);
        // It gave up about outageMs after Redis went away, not at once and not after it came back.
        expect(Date.now() - downAt).toBeGreaterThan(1_000);
        // The same crawl started again takes what the first left (its locks run out after 5 s).
        const second = start('second');
        expect(await second.exited).toMatchObject({ code: 0 });
        const counts = countUrls(first.handled, second.handled);
        expect([...counts.keys()].sort()).toEqual(allPages(web).sort());
        const held = new Set(first.started);
        expect([...counts].filter(([url, n]) => n > 1 && !held.has(url))).toEqual([]);
    }, 120_000);
});

/** The storage calls themselves, on a Redis of the test's own that is killed and started again. */
describeOwnRedis('RedisStorageClient calls while Redis restarts', () => {
    let redis: OwnRedis;
    let client: RedisStorageClient;

    afterEach(async () => {
        await client.teardown();
        await redis.close();
    });

    const openQueue = async () => {
        const { id } = await client.requestQueues().getOrCreate('q');
        return client.requestQueue(id, { clientKey: 'me' });
    };
    const request = (n: number) => ({ url: `http://x.test/${n}`, uniqueKey: `http://x.test/${n}` });

    it('waits for a restarted Redis that kept its data, and answers from it', async () => {
        redis = await OwnRedis.start({ appendonly: true });
        client = new RedisStorageClient({ url: redis.url, prefix: 'calls' });
        const queue = await openQueue();
        await queue.batchAddRequests([request(1), request(2)]);
        await redis.kill();
        const calls = Promise.all([
            queue.listAndLockHead({ limit: 1, lockSecs: 60 }),
            queue.addRequest(request(3)),
            client
                .keyValueStores()
                .getOrCreate('kv')
                .then(({ id }) => client.keyValueStore(id).setRecord({ key: 'k', value: 1 })),
        ]);
        const settled = { done: false };
        void calls.finally(() => (settled.done = true));
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect(settled.done).toBe(false);
        await redis.start();
        const [head, added] = await calls;
        expect(head.items.map((r) => r.url)).toEqual(['http://x.test/1']);
        expect(added.wasAlreadyPresent).toBe(false);
        expect((await queue.get())!.pendingRequestCount).toBe(3);
    }, 30_000);

    it('fails a call with a RedisUnavailableError naming outageMs when Redis stays away', async () => {
        redis = await OwnRedis.start({ appendonly: false });
        client = new RedisStorageClient({ url: redis.url, prefix: 'calls', outageMs: 800 });
        const queue = await openQueue();
        await redis.kill();
        const startedAt = Date.now();
        const call = queue.listAndLockHead({ limit: 1, lockSecs: 60 });
        await expect(call).rejects.toThrow(
            /listAndLockHead of request queue .*: Redis did not answer for 800 ms \(outageMs\)/,
        );
        await expect(call).rejects.toBeInstanceOf(RedisUnavailableError);
        expect(Date.now() - startedAt).toBeGreaterThanOrEqual(800);
        expect(Date.now() - startedAt).toBeLessThan(5_000);
    }, 30_000);

    it('says the queue was lost when Redis comes back without it', async () => {
        redis = await OwnRedis.start({ appendonly: false });
        client = new RedisStorageClient({ url: redis.url, prefix: 'calls' });
        const queue = await openQueue();
        await queue.addRequest(request(1));
        await redis.kill();
        await redis.start();
        const call = queue.listAndLockHead({ limit: 1, lockSecs: 60 });
        await expect(call).rejects.toThrow(
            /does not exist \(it was there before: .*Redis restarted without persistence/,
        );
        await expect(call).rejects.toBeInstanceOf(RedisUnavailableError);
        // Adding links to the lost queue fails loudly too (not "unprocessed", which Crawlee skips).
        await expect(queue.batchAddRequests([request(2)])).rejects.toThrow(/does not exist/);
    }, 30_000);
});
