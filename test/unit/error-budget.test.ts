import type { Request } from '@crawlee/core';

import { DomainUnreachableError, ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

const T0 = 1_700_000_000_000;

/** Hands out the next request and brings it back with a network error, as Crawlee would. */
async function failOnce(manager: ThrottlingRequestManager, clock: ManualClock): Promise<Request> {
    clock.advance(120_000);
    const request = (await manager.fetchNextRequest())!;
    request.pushErrorMessage(new Error('connect ECONNREFUSED 127.0.0.1:9'));
    await manager.reclaimRequest(request);
    return request;
}

describe('error budget per domain (maxConsecutiveErrors)', () => {
    function setup(maxConsecutiveErrors?: number) {
        const clock = new ManualClock(T0);
        const manager = new ThrottlingRequestManager(
            { domains: ['a.com'], clock, ...(maxConsecutiveErrors === undefined ? {} : { maxConsecutiveErrors }) },
            memoryConfig(),
        );
        return { clock, manager };
    }
    const errorsOf = (m: ThrottlingRequestManager) => m.snapshot().find((s) => s.domain === 'a.com')!.consecutiveErrors;

    test('after 5 network errors in a row the domain hands out at once, with noRetry, and the hook fails it', async () => {
        const { manager, clock } = setup();
        await manager.addRequest({ url: 'https://a.com/1' });
        for (let i = 0; i < 5; i++) await failOnce(manager, clock);
        expect(errorsOf(manager)).toBe(5);
        // Backing off after the last error, yet handed out at once: it is to fail, not to wait.
        const request = (await manager.fetchNextRequest())!;
        expect(request.noRetry).toBe(true);
        expect(() => manager.checkReachable({ request })).toThrow(DomainUnreachableError);
    });

    test('any answer, even a 429, resets the count; an answer lifts the budget from a handed-out request', async () => {
        const { manager, clock } = setup();
        await manager.addRequest({ url: 'https://a.com/1' });
        for (let i = 0; i < 4; i++) await failOnce(manager, clock);
        clock.advance(120_000);
        const request = (await manager.fetchNextRequest())!;
        await manager.handleResponse({ request }, { statusCode: 429, headers: {} }).catch(() => undefined);
        expect(errorsOf(manager)).toBe(0);
        await manager.reclaimRequest(request);
        for (let i = 0; i < 5; i++) await failOnce(manager, clock);
        const doomed = (await manager.fetchNextRequest())!;
        expect(doomed.noRetry).toBe(true);
        // The host answers (another request of it): the handed-out one is sent as it was.
        await manager.handleResponse({ request: doomed }, { statusCode: 200, headers: {} });
        expect(() => manager.checkReachable({ request: doomed })).not.toThrow();
        expect(doomed.noRetry).toBe(false);
    });

    test('0 turns it off: the domain keeps backing off', async () => {
        const { manager, clock } = setup(0);
        await manager.addRequest({ url: 'https://a.com/1' });
        for (let i = 0; i < 6; i++) await failOnce(manager, clock);
        expect(await manager.fetchNextRequest()).toBeNull();
    });
});
