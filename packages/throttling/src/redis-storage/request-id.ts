import { createHash } from 'node:crypto';

/** Length of a request id derived from its unique key (as Crawlee's own storages derive it). */
const REQUEST_ID_LENGTH = 15;

/**
 * The id of the request with `uniqueKey`: the same id Crawlee's `RequestQueue` computes for its
 * cache and memory-storage stores, so ids agree whichever storage a crawl moves between.
 */
export function requestIdOf(uniqueKey: string): string {
    return createHash('sha256').update(uniqueKey).digest('base64').replace(/[+/=]/g, '').slice(0, REQUEST_ID_LENGTH);
}
