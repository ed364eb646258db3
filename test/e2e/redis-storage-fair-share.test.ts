import type { RequestQueueClient } from '@crawlee/types';
import { RedisStorageClient } from 'crawlee-throttling/redis';

import { REDIS_URL, describeRedis, uniquePrefix } from '../helpers/redis';

/**
 * Several clients of one queue on the local Redis, each as a crawler process's RequestQueue asks
 * (25 at a time): a client locks its share of the queue's outstanding requests while others
 * consume it too, and the whole limit alone. In the e2e project: a client stops counting when the
 * locks of its latest call lapse, on Redis's own clock, so one test waits for that in real time.
 */
describeRedis('RedisRequestQueueClient fair share of one queue', () => {
    let prefix: string;
    let storage: RedisStorageClient;

    beforeEach(() => {
        prefix = uniquePrefix('fair-share');
        storage = new RedisStorageClient({ url: REDIS_URL, prefix });
    });
    afterEach(async () => {
        await storage.dropAll();
        await storage.teardown();
    });

    const open = async (...keys: string[]): Promise<RequestQueueClient[]> => {
        const { id } = await storage.requestQueues().getOrCreate('q');
        return keys.map((clientKey) => storage.requestQueue(id, { clientKey }));
    };
    const reqs = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ url: `http://x.test/${i}`, uniqueKey: `http://x.test/${i}` }));
    const lock = async (queue: RequestQueueClient, lockSecs = 60) =>
        (await queue.listAndLockHead({ limit: 25, lockSecs })).items;
    const handle = (queue: RequestQueueClient, item: { id?: string }) =>
        queue.updateRequest({ ...(item as object), handledAt: new Date().toISOString() } as never);

    it.each([2, 4])('gives each of %i polling clients its share of the queue', async (n) => {
        const clients = await open(...Array.from({ length: n }, (_, i) => `c${i}`));
        // Each has polled the empty queue, as crawlers waiting for work do.
        for (const c of clients) expect(await lock(c)).toEqual([]);
        await clients[0].batchAddRequests(reqs(40));
        const taken = [];
        for (const c of clients) taken.push((await lock(c)).length);
        expect(taken).toEqual(Array.from({ length: n }, () => 40 / n));
    });

    it('gives a client alone the whole limit, and leaves a newcomer the rest of its share', async () => {
        const [a, b] = await open('A', 'B');
        await a.batchAddRequests(reqs(30));
        expect(await lock(a)).toHaveLength(25);
        // B comes: 30 outstanding over two clients, so its share is 15, of the 5 still pending.
        expect(await lock(b)).toHaveLength(5);
        await a.batchAddRequests(reqs(40).slice(30));
        // 40 outstanding, A holds 25 of them: more than its share of 20, so one more at a time.
        expect(await lock(a)).toHaveLength(1);
        expect(await lock(b)).toHaveLength(9);
    });

    it('stops counting a client when the locks of its latest call lapse', async () => {
        const [a, b] = await open('A', 'B');
        expect(await lock(b, 0.3)).toEqual([]);
        await a.batchAddRequests(reqs(20));
        expect(await lock(a)).toHaveLength(10);
        await new Promise((resolve) => setTimeout(resolve, 400)); // Redis TIME: B's 0.3 s lapse on Redis's clock.
        expect(await lock(a)).toHaveLength(10);
        // The set of clients is pruned as it is read: only A is left in it.
        const redis = storage.connection;
        const [clients] = await redis.keys(`{${prefix.replace(/:+$/, '')}:rq:*}:clients`);
        expect(await redis.zrange(clients, 0, -1)).toEqual(['A']);
        await a.delete();
        expect(await redis.keys(`{${prefix.replace(/:+$/, '')}:rq:*`)).toEqual([]);
    });

    it('keeps counting a client while it prolongs a lock past its latest call', async () => {
        const [a, b] = await open('A', 'B');
        await a.batchAddRequests(reqs(40));
        expect(await lock(a)).toHaveLength(25);
        const taken = await lock(b, 0.3);
        expect(taken).toHaveLength(15);
        // B keeps one request (its frontier window holds it) and lets the others lapse.
        await b.prolongRequestLock(taken[0].id!, { lockSecs: 60 });
        await new Promise((resolve) => setTimeout(resolve, 400)); // Redis TIME: B's 0.3 s lapse on Redis's clock.
        // Two consumers: 40 outstanding, A holds 25, more than its share of 20, so one at a time.
        // Counted out, B would leave A all 14 that came back.
        expect(await lock(a)).toHaveLength(1);
    });

    it('hands every request out once over many polls, no call taking past its share', async () => {
        const keys = ['A', 'B', 'C', 'D'];
        const clients = await open(...keys);
        for (const c of clients) await lock(c);
        const total = 120;
        await clients[0].batchAddRequests(reqs(total));
        const held = keys.map(() => [] as { id?: string; url: string }[]);
        const seen = new Map<string, number>();
        let handled = 0;
        for (let round = 0; handled < total && round < 200; round++) {
            for (const [i, c] of clients.entries()) {
                // Each client works through part of what it holds (a different pace each), then polls.
                for (const item of held[i].splice(0, Math.ceil(held[i].length / (i + 2)))) {
                    await handle(c, item);
                    handled += 1;
                }
                const outstanding = total - handled;
                const items = await lock(c);
                for (const item of items) seen.set(item.url, (seen.get(item.url) ?? 0) + 1);
                held[i].push(...items);
                expect(held[i].length).toBeLessThanOrEqual(
                    Math.max(held[i].length - items.length + 1, Math.ceil(outstanding / keys.length)),
                );
            }
        }
        expect(handled).toBe(total);
        expect(seen.size).toBe(total);
        expect([...seen.values()].every((count) => count === 1)).toBe(true);
        await expect(clients[0].get()).resolves.toMatchObject({ pendingRequestCount: 0, handledRequestCount: total });
    });
});
