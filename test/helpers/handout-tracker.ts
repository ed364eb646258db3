import type { Request } from '@crawlee/core';

import type { ThrottlingRequestManager } from 'crawlee-throttling';

/**
 * Requests the managers of a test handed out and the test left in flight. A request in flight
 * keeps its shared slot's lease renewed on a real timer; left alone, that timer outlives the test and
 * logs into later ones (jest then fails the run with "Cannot log after tests are done").
 */
export interface HandoutTracker {
    /** Watches what `manager` hands out and what comes back; returns it. */
    track(manager: ThrottlingRequestManager): ThrottlingRequestManager;
    /** Marks every request still in flight handled (failures ignored: a test may have broken the store). */
    finishAll(): Promise<void>;
}

export function handoutTracker(): HandoutTracker {
    const inFlight = new Map<Request, ThrottlingRequestManager>();
    return {
        track(manager) {
            const fetch = manager.fetchNextRequest.bind(manager);
            const handled = manager.markRequestHandled.bind(manager);
            const reclaim = manager.reclaimRequest.bind(manager);
            manager.fetchNextRequest = (async () => {
                const request = await fetch();
                if (request) inFlight.set(request, manager);
                return request;
            }) as typeof manager.fetchNextRequest;
            manager.markRequestHandled = async (request) => {
                inFlight.delete(request);
                return handled(request);
            };
            manager.reclaimRequest = async (request, options) => {
                inFlight.delete(request);
                return reclaim(request, options);
            };
            return manager;
        },
        async finishAll() {
            const left = [...inFlight];
            inFlight.clear();
            for (const [request, manager] of left) await manager.markRequestHandled(request).catch(() => undefined);
        },
    };
}
