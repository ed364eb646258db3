/**
 * Parity: background batches of `addRequestsBatched`. Mirrors upstream Crawlee's "addRequestsBatched
 * keeps isFinished false while background batches are landing" and "addRequestsBatched surfaces a
 * background failure without an unhandled rejection", with a storage fault injected once into the
 * batch writes of a real domain queue (memory-storage).
 */
import { log } from '@crawlee/core';
import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';

import { faultyBatchWrites } from '../helpers/faults';
import { memoryConfig } from '../helpers/storage';

const URLS = ['https://a.com/1', 'https://a.com/2', 'https://a.com/3'];

function setup(opener: ReturnType<typeof faultyBatchWrites>['opener']) {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const manager = new ThrottlingRequestManager(
        { domains: ['a.com'], clock, concurrency: 10, rampup: false, requestManagerOpener: opener },
        memoryConfig(),
    );
    return { manager, clock };
}

describe('parity: background batches', () => {
    test('upstream "keeps isFinished false while background batches are landing": waiting, never a false ready', async () => {
        const fault = faultyBatchWrites('hang', 2);
        const { manager } = setup(fault.opener);
        const result = await manager.addRequestsBatched(URLS, { batchSize: 1, waitBetweenBatchesMillis: 0 });
        expect(result.addedRequests).toHaveLength(1);
        await manager.markRequestHandled((await manager.fetchNextRequest())!);
        // The second batch is still being written: nothing can be handed out, yet the crawl goes on.
        expect(await manager.checkReadiness()).toMatchObject({ status: 'waiting' });
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(await manager.isFinished()).toBe(false);
        fault.release();
        const rest = await result.waitForAllRequestsToBeAdded;
        expect(rest).toHaveLength(2);
        expect(await manager.checkReadiness()).toMatchObject({ status: 'ready' });
        const left: string[] = [];
        for (let r = await manager.fetchNextRequest(); r; r = await manager.fetchNextRequest()) {
            left.push(r.url);
            await manager.markRequestHandled(r);
        }
        expect(left.sort()).toEqual(['https://a.com/2', 'https://a.com/3']);
        expect(await manager.isFinished()).toBe(true);
    });

    test('upstream "surfaces a background failure without an unhandled rejection": it rejects, and is logged once', async () => {
        let noteLogged: () => void = () => undefined;
        const logged = new Promise<void>((resolve) => {
            noteLogged = resolve;
        });
        const error = jest.spyOn(Object.getPrototypeOf(log), 'error').mockImplementation(() => noteLogged());
        const unhandled: unknown[] = [];
        const onUnhandled = (reason: unknown) => unhandled.push(reason);
        process.on('unhandledRejection', onUnhandled);
        try {
            const fault = faultyBatchWrites('throw', 2);
            const { manager } = setup(fault.opener);
            const result = await manager.addRequestsBatched(URLS, { batchSize: 1, waitBetweenBatchesMillis: 0 });
            expect(result.addedRequests).toHaveLength(1);
            // Nobody awaits the promise yet (Crawlee's crawler never does): let the failure happen.
            await logged;
            await new Promise((resolve) => setImmediate(resolve));
            expect(unhandled).toEqual([]);
            expect(fault.state.fired).toBe(1);
            expect(error).toHaveBeenCalledTimes(1);
            expect(error.mock.calls[0][0]).toMatch(/background batch.*failed.*injected/s);
            // A caller that does await it sees the failure.
            await expect(result.waitForAllRequestsToBeAdded).rejects.toThrow('injected storage fault');
            // What landed is served; the crawl is not held open by the failed batch.
            const got: string[] = [];
            for (let r = await manager.fetchNextRequest(); r; r = await manager.fetchNextRequest()) {
                got.push(r.url);
                await manager.markRequestHandled(r);
            }
            expect(got).toEqual(['https://a.com/1']);
            expect(await manager.isFinished()).toBe(true);
        } finally {
            process.off('unhandledRejection', onUnhandled);
            error.mockRestore();
        }
    });
});
