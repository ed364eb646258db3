import type { Request } from '@crawlee/core';

import { RequestThrottledError } from 'crawlee-throttling';
import type { ThrottlingRequestManager } from 'crawlee-throttling';

/**
 * Answers a request `manager` handed out, as the crawler integration would: a 200 is handled; any other
 * status is a refusal (`Retry-After: retryAfter` when given), which must throw `RequestThrottledError`,
 * and the request goes back to its queue.
 */
export async function answerRequest(
    manager: ThrottlingRequestManager,
    request: Request,
    status: number,
    retryAfter?: string,
): Promise<void> {
    const headers: Record<string, string> = retryAfter ? { 'retry-after': retryAfter } : {};
    if (status === 200) {
        await manager.handleResponse({ request }, { statusCode: 200, headers });
        await manager.markRequestHandled(request);
        return;
    }
    const error = await manager.handleResponse({ request }, { statusCode: status, headers }).catch((e) => e);
    expect(error).toBeInstanceOf(RequestThrottledError);
    await manager.reclaimRequest(request);
}

/** The next request `manager` hands out, asking again every 5 ms of `clock` until one is ready. */
export async function nextRequest(
    manager: ThrottlingRequestManager,
    clock: { advance(ms: number): unknown },
): Promise<Request> {
    for (;;) {
        const request = await manager.fetchNextRequest();
        if (request) return request;
        clock.advance(5);
    }
}
