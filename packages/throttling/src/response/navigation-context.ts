import type { Request, Session } from '@crawlee/core';

/**
 * The crawling context fields a response check needs. Attached to a crawler, the check gets the
 * crawler's whole context (a browser crawler's `page` too); `response` may be swapped for a stream
 * carrying the same body when `refusalWhen` reads it.
 */
export interface NavigationContext {
    request: Request;
    session?: Session;
    response?: unknown;
}
