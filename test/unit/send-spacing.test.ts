import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';
import { withPort } from '../helpers/throttler-port';

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
