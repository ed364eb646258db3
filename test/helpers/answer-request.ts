import type { Request } from '@crawlee/core';

import { RequestThrottledError } from 'crawlee-throttling';
import type { ThrottlingRequestManager } from 'crawlee-throttling';

/**
 * Hands `manager` the response to a request it handed out, as the crawler integration would: accepted,
 * the request is handled; refused, `handleResponse` must throw `RequestThrottledError` (the free retry),
 * and the request goes back to its queue.
 */
export async function respond(
    manager: ThrottlingRequestManager,
    request: Request,
    response: { statusCode: number; headers: Record<string, string> },
    refused: boolean,
): Promise<void> {
    if (!refused) {
        await manager.handleResponse({ request }, response);
        await manager.markRequestHandled(request);
        return;
    }
    const error = await manager.handleResponse({ request }, response).catch((e: unknown) => e);
    if (!(error instanceof RequestThrottledError)) throw new Error(`refusal not retried: ${String(error)}`);
    await manager.reclaimRequest(request);
}

/** Answers a request `manager` handed out with `status`: 200 is accepted, any other a refusal (`Retry-After: retryAfter` when given). */
export async function answerRequest(
    manager: ThrottlingRequestManager,
    request: Request,
    status: number,
    retryAfter?: string,
): Promise<void> {
    const headers: Record<string, string> = retryAfter ? { 'retry-after': retryAfter } : {};
    await respond(manager, request, { statusCode: status, headers }, status !== 200);
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
