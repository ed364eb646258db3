/**
 * Requests of `inner` moved to their domain's own queue (shared layout): added there, then marked
 * handled in `inner`, with the key they went to. Local storage writes a request file in place, so a
 * kill during a later write to the moved copy (a lock, a retry) can leave that file empty, and the
 * storage skips it when it starts again. Start URLs passed again go to `inner`, which answers
 * "already handled"; those it marks as moved are added to their own queue again, where the storage
 * dedupes them unless the copy was lost.
 */
import type { Dictionary, Request, RequestOptions } from '@crawlee/core';

/** The `userData` field marking a request of `inner` as moved to the own queue of a key. */
export const MOVED_TO = '__crawleeThrottlingMovedTo';

/** Marks `request` (about to be marked handled in `inner`) as moved to the queue of `key`. */
export function markMoved(request: Request, key: string): void {
    (request.userData as Dictionary)[MOVED_TO] = key;
}

/** The key a request of `inner` was moved to, if it was. */
export function movedTo(request: Request | null | undefined): string | undefined {
    const key = (request?.userData as Dictionary | undefined)?.[MOVED_TO];
    return typeof key === 'string' ? key : undefined;
}

/**
 * A fresh request carrying everything of `request` but its queue identity and handled state (as a
 * new entry in another queue), and without the moved mark.
 */
export function movableCopy(request: Request): RequestOptions {
    const {
        id: _id,
        handledAt: _handledAt,
        ...rest
    } = JSON.parse(JSON.stringify(request)) as RequestOptions & {
        handledAt?: string;
    };
    if (rest.userData) delete (rest.userData as Dictionary)[MOVED_TO];
    return rest;
}
