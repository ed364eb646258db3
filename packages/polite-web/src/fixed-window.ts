/** When a fixed window starts: at a client's first request (express-rate-limit), or on the epoch (GitHub's hourly quota). */
export type WindowStart = 'first-request' | 'epoch';

/**
 * A fixed-window counter driven by an external clock: at most `limit` requests per window of
 * `windowMs`. Every request counts, refused ones included, as express-rate-limit's memory store does,
 * so a client that keeps knocking on an exhausted window gains nothing.
 */
export class FixedWindow {
    // Start of the current window, epoch ms; undefined until the first request opens one ('first-request').
    private startedAt: number | undefined;
    // Requests counted in the current window.
    private hits = 0;

    constructor(
        /** Most requests served per window. */
        readonly limit: number,
        /** Window length, ms. */
        readonly windowMs: number,
        readonly start: WindowStart,
    ) {}

    /** Counts one request; true when it is within the limit. */
    tryTake(now: number): boolean {
        this.roll(now);
        // A client's window opens with its first request after the last one ended.
        this.startedAt ??= now;
        this.hits += 1;
        return this.hits <= this.limit;
    }

    /** Requests left in the current window (0 when spent). */
    remaining(now: number): number {
        this.roll(now);
        return Math.max(0, this.limit - this.hits);
    }

    /** Milliseconds until the current window ends (a whole window when none is open yet). */
    msUntilReset(now: number): number {
        this.roll(now);
        return this.startedAt === undefined ? this.windowMs : this.startedAt + this.windowMs - now;
    }

    /** Forgets every count, as a restarted server does. */
    reset(): void {
        this.startedAt = undefined;
        this.hits = 0;
    }

    private roll(now: number): void {
        if (this.start === 'epoch') {
            const current = Math.floor(now / this.windowMs) * this.windowMs;
            if (current !== this.startedAt) {
                this.startedAt = current;
                this.hits = 0;
            }
            return;
        }
        if (this.startedAt !== undefined && now >= this.startedAt + this.windowMs) {
            this.startedAt = undefined;
            this.hits = 0;
        }
    }
}
