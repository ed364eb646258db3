import type { Clock } from '../core/clock';

/** Empty polls answered by Redis before the backoff starts. */
const FREE_POLLS = 3;
/** The first wait after the free polls, ms; each further empty poll doubles it. */
const FIRST_WAIT_MS = 50;
/** The longest wait, ms: how late this client may see that the others' locks are all gone. */
const MAX_WAIT_MS = 500;

/**
 * Fewer idle `listAndLockHead` calls while other processes hold the whole queue: after a few polls
 * that found nothing to lock but locked requests, the next polls are answered here ("nothing,
 * others hold work") for a wait that doubles up to MAX_WAIT_MS. The wait never passes the moment
 * the earliest lock expires (so a dead worker's requests are taken as soon as before), and ends at
 * once when this client adds or gives back a request. A poll that finds no locked requests at all
 * (the end of the crawl) never starts a wait; the end is seen at most MAX_WAIT_MS late when the last
 * locks are released by another process.
 */
export class IdlePollBackoff {
    private emptyPolls = 0;
    private quietUntil = 0;

    constructor(private readonly clock: Clock) {}

    /** Whether the next poll may be answered without Redis (still within a wait). */
    quiet(): boolean {
        return this.clock.now() < this.quietUntil;
    }

    /**
     * After a poll that Redis answered: `found` requests locked, `othersHold` whether the queue has
     * locked requests, `expiresInMs` until the earliest of them expires.
     */
    polled(found: number, othersHold: boolean, expiresInMs: number): void {
        if (found > 0 || !othersHold) return this.wake();
        this.emptyPolls += 1;
        if (this.emptyPolls <= FREE_POLLS) return;
        const wait = Math.min(FIRST_WAIT_MS * 2 ** (this.emptyPolls - FREE_POLLS - 1), MAX_WAIT_MS);
        this.quietUntil = this.clock.now() + Math.max(0, Math.min(wait, expiresInMs));
    }

    /** Something this client did may have given the queue work: ask Redis next time. */
    wake(): void {
        this.emptyPolls = 0;
        this.quietUntil = 0;
    }
}
