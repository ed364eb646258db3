import { RobotsUnreachableError } from '../core/errors';
import type { OriginBlock, OriginBook } from './origin-book';
import { originOf } from '../routing/origin';

/**
 * The block in force at `now` on the origin of `url` under a key: its robots.txt stayed unreachable,
 * so its requests fail without being sent. An expired block is not in force; it stays recorded until
 * the origin's next check settles, so that check is due (see `OriginGate.isDue`).
 */
export function blockInForce(book: Readonly<OriginBook>, url: string, now: number): OriginBlock | undefined {
    if (book.blockedOrigins === undefined) return undefined;
    const block = book.blockedOrigins.get(originOf(url));
    return block !== undefined && now < block.until ? block : undefined;
}

/**
 * Whether every origin the key has checked is blocked at `now`: then all its requests are to fail, and
 * they are handed out at once instead of at the key's pace. (A request of an origin not checked yet
 * is checked first when it comes to the head of the queue.)
 */
export function everyOriginBlocked(book: Readonly<OriginBook>, now: number): boolean {
    const blocked = book.blockedOrigins;
    // Blocks are a subset of the checked origins (forgetting an origin drops both), so sizes tell first.
    if (blocked === undefined || blocked.size < (book.checkedOrigins?.size ?? 0)) return false;
    for (const block of blocked.values()) if (now >= block.until) return false;
    return true;
}

/** Whether any origin of the key is blocked at `now` (a block that ended says nothing: its origin is checked again). */
export function anyOriginBlocked(book: Readonly<OriginBook>, now: number): boolean {
    if (book.blockedOrigins === undefined) return false;
    for (const block of book.blockedOrigins.values()) if (now < block.until) return true;
    return false;
}

/** The error a request of a blocked origin fails with, or undefined when its origin is not blocked. */
export function robotsUnreachableFailure(book: Readonly<OriginBook>, url: string, now: number): Error | undefined {
    const block = blockInForce(book, url, now);
    if (!block) return undefined;
    return new RobotsUnreachableError(url, originOf(url), block.reason, block.attempts, block.until);
}
