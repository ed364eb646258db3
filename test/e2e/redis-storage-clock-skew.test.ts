import { RedisStorageClient } from 'crawlee-throttling/redis';

import { REDIS_URL, describeRedis, uniquePrefix } from '../helpers/redis';

const HOUR = 3_600_000;

/**
 * Locks live on Redis's clock, not on the clocks of the machines that share the queue. crawlee-python's
 * Redis queue stamps a fetched request with the fetching machine's own time plus 300 s and reclaims
 * stale ones by the time of whichever machine checks: a machine an hour ahead there reclaims at once
 * what the others hold, and one an hour behind keeps what it fetched an hour longer. Here each client
 * is given a clock an hour off (its `clock` option, which its own idle-poll waits use), and the locks
 * still last `lockSecs` on Redis. In the e2e project: expiry is real time on Redis, so the test waits.
 */
describeRedis('RedisStorageClient locks on Redis time, whatever the clients’ clocks', () => {
    const prefix = uniquePrefix('clock-skew');
    const behind = new RedisStorageClient({ url: REDIS_URL, prefix, clock: { now: () => Date.now() - HOUR } });
    const ahead = new RedisStorageClient({ url: REDIS_URL, prefix, clock: { now: () => Date.now() + HOUR } });
    afterAll(async () => {
        await behind.dropAll();
        await Promise.all([behind.teardown(), ahead.teardown()]);
    });

    it('a client an hour ahead cannot take a live lock, and one an hour behind cannot keep it past lockSecs', async () => {
        const { id } = await behind.requestQueues().getOrCreate('skew');
        const slow = behind.requestQueue(id, { clientKey: 'behind' });
        const fast = ahead.requestQueue(id, { clientKey: 'ahead' });
        await slow.batchAddRequests(['1', '2'].map((n) => ({ url: `http://x.test/${n}`, uniqueKey: n })));

        const [held] = (await slow.listAndLockHead({ limit: 1, lockSecs: 1 })).items;
        expect(held.uniqueKey).toBe('1');
        // The expiry the client is told is Redis's time + lockSecs, not its own clock's.
        const { lockExpiresAt } = await slow.prolongRequestLock(held.id, { lockSecs: 1 });
        expect(Math.abs(lockExpiresAt.getTime() - (Date.now() + 1_000))).toBeLessThan(500);
        // An hour ahead, the lock is still live: only the other request is free.
        const first = await fast.listAndLockHead({ limit: 2, lockSecs: 60 });
        expect(first.items.map((i) => i.uniqueKey)).toEqual(['2']);

        await new Promise((resolve) => setTimeout(resolve, 1_300)); // The lock lapses on Redis's clock.
        // An hour behind, its lock is gone all the same: the request went back and the other client takes it.
        const second = await fast.listAndLockHead({ limit: 2, lockSecs: 60 });
        expect(second.items.map((i) => i.uniqueKey)).toEqual(['1']);
        await expect(slow.prolongRequestLock(held.id, { lockSecs: 60 })).rejects.toThrow(
            /another client holds the lock/,
        );
    });
});
