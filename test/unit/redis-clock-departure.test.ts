import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import { RedisDomainClock } from 'crawlee-throttling/redis';

import { handoutTracker } from '../helpers/handout-tracker';
import { describeRedis, REDIS_URL, uniquePrefix } from '../helpers/redis';
import { memoryConfig } from '../helpers/storage';

const T0 = Date.UTC(2026, 0, 1);
const handouts = handoutTracker();
afterEach(() => handouts.finishAll());

// Two crawler processes on one RedisDomainClock, a site paced by interval with several requests in flight.
describeRedis('RedisDomainClock: the interval counts from the departure', () => {
    const keyPrefix = uniquePrefix('departure');
    const clocks: RedisDomainClock[] = [];
    afterAll(() => Promise.all(clocks.map((c) => c.close())));

    function processOn(clock: ManualClock) {
        const shared = new RedisDomainClock({ url: REDIS_URL, keyPrefix });
        clocks.push(shared);
        const extend = jest.spyOn(shared, 'extend');
        const manager = handouts.track(
            new ThrottlingRequestManager(
                { domains: 'all', clock, delaySecs: 1, concurrency: 4, rampup: false, sharedClock: shared },
                memoryConfig(),
            ),
        );
        return { manager, extend };
    }

    it('a request that leaves late moves the shared clock to one interval after it left', async () => {
        const clock = new ManualClock(T0);
        const a = processOn(clock);
        await a.manager.addRequest({ url: 'https://late.example/0' });
        await a.manager.addRequest({ url: 'https://late.example/1' });
        const first = await a.manager.fetchNextRequest();
        expect(first).not.toBeNull();
        // A busy event loop: the crawler's hook runs 600 ms after the handout.
        clock.advance(600);
        a.manager.checkReachable({ request: first! });
        await new Promise((resolve) => setImmediate(resolve));
        // The shared clock is told the next dispatch is one interval after the departure...
        expect(a.extend).toHaveBeenCalledWith('late.example', expect.objectContaining({ nextAt: T0 + 1_600 }));
        // ...and this process holds its next request until then, though the handout was 1 s ago.
        clock.advance(400);
        expect(await a.manager.fetchNextRequest()).toBeNull();
        expect(await a.manager.checkReadiness()).toMatchObject({ kind: 'waiting', readyAt: T0 + 1_600 });
    });
});
