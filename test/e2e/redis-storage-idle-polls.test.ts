import { RedisStorageClient } from 'crawlee-throttling/redis';

import { ManualClock } from '../../packages/throttling/src/core/clock';
import { REDIS_URL, describeRedis, uniquePrefix } from '../helpers/redis';

/**
 * Idle polls against the local Redis: one process ("A") holds every request of a queue, another
 * ("B") asks for the head again and again on a manual clock, 50 ms apart, as a crawler whose
 * frontier others hold does. Counted: the list-and-lock scripts that reached Redis. In the e2e
 * project: lock expiry is on Redis's own clock, so one test waits for it in real time.
 */
describeRedis('RedisRequestQueueClient idle polls', () => {
    let prefix: string;
    const opened: RedisStorageClient[] = [];
    const clock = new ManualClock();

    beforeEach(() => (prefix = uniquePrefix('idle-polls')));
    afterEach(async () => {
        await opened[0]?.dropAll();
        await Promise.all(opened.splice(0).map((c) => c.teardown()));
    });

    const open = async (clientKey: string) => {
        const storage = new RedisStorageClient({ url: REDIS_URL, prefix, clock });
        opened.push(storage);
        const { id } = await storage.requestQueues().getOrCreate('q');
        const queue = storage.requestQueue(id, { clientKey });
        const calls = jest.spyOn(
            storage.connection as unknown as { crawleeRqListAndLock: () => unknown },
            'crawleeRqListAndLock',
        );
        return { queue, calls };
    };
    const req = (n: number) => ({ url: `http://x.test/${n}`, uniqueKey: `http://x.test/${n}` });
    /** B polls `times` times, 50 ms apart: how many polls found requests, and whether the last saw locks. */
    const poll = async (queue: Awaited<ReturnType<typeof open>>['queue'], times: number, lockSecs = 60) => {
        let found = 0;
        let locked = false;
        for (let i = 0; i < times; i++) {
            const head = await queue.listAndLockHead({ limit: 25, lockSecs });
            found += head.items.length;
            locked = head.queueHasLockedRequests === true;
            clock.advance(50);
        }
        return { found, locked };
    };

    it('asks Redis for a fraction of the polls while others hold the whole queue', async () => {
        const a = await open('A');
        const b = await open('B');
        await a.queue.batchAddRequests([req(1), req(2), req(3)]);
        expect((await a.queue.listAndLockHead({ limit: 25, lockSecs: 60 })).items).toHaveLength(3);
        const { found, locked } = await poll(b.queue, 100);
        expect(found).toBe(0);
        expect(locked).toBe(true);
        // 100 polls over 5 s: 3 free ones, then one every 50, 100, 200, 400 ms and every 500 ms after.
        expect(b.calls.mock.calls.length).toBeLessThanOrEqual(20);
        expect(b.calls.mock.calls.length).toBeGreaterThanOrEqual(10);
    });

    it('asks again at once after an add of its own, and sees the end within 500 ms', async () => {
        const a = await open('A');
        const b = await open('B');
        await a.queue.batchAddRequests([req(1)]);
        const [held] = (await a.queue.listAndLockHead({ limit: 25, lockSecs: 60 })).items;
        await poll(b.queue, 20);
        await b.queue.addRequest(req(2));
        expect((await b.queue.listAndLockHead({ limit: 25, lockSecs: 60 })).items.map((r) => r.url)).toEqual([
            'http://x.test/2',
        ]);
        await b.queue.updateRequest({ ...req(2), id: undefined, handledAt: new Date().toISOString() } as never);
        await poll(b.queue, 20);
        // A handles its request: the queue is done, and B sees no locked requests within 500 ms.
        await a.queue.updateRequest({ ...held, handledAt: new Date().toISOString() } as never);
        const { locked } = await poll(b.queue, 11);
        expect(locked).toBe(false);
    });

    it("never waits past the earliest lock expiry: a dead worker's requests are taken as soon as before", async () => {
        const a = await open('A');
        const b = await open('B');
        await a.queue.batchAddRequests([req(1)]);
        await a.queue.listAndLockHead({ limit: 25, lockSecs: 0.2 });
        // B's polls on the manual clock stop waiting at A's lock expiry (about 200 ms from now).
        await poll(b.queue, 4);
        const before = b.calls.mock.calls.length;
        clock.advance(250);
        await new Promise((resolve) => setTimeout(resolve, 250)); // Redis TIME: the lock expires on Redis's clock.
        const head = await b.queue.listAndLockHead({ limit: 25, lockSecs: 60 });
        expect(b.calls.mock.calls.length).toBe(before + 1);
        expect(head.items.map((r) => r.url)).toEqual(['http://x.test/1']);
    });
});
