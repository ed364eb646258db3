/**
 * When a site's announced quota resets, narrowed over the answers of one window. RateLimit headers
 * give the time to the reset in whole seconds rounded up, so each answer bounds the reset from above
 * by its own time plus the seconds it announced, and the earliest such bound of the window's answers
 * is the tightest: a window of a second announces "1" throughout, and holding a second from the
 * answer that found the quota empty lost most of the next window. An answer from a window a later
 * request already saw end holds nothing. Times are epoch ms.
 */
export class QuotaReset {
    // The send time of the first answer seen from the current window (-Infinity: none yet); an answer
    // to a request sent before it is from a window already over.
    private windowFrom = Number.NEGATIVE_INFINITY;
    // The requests left as last announced: more than that is a later window.
    private remaining = Number.POSITIVE_INFINITY;
    // The earliest reset any answer of the current window announced.
    private earliest = Number.POSITIVE_INFINITY;
    // A refusal came after a narrowed hold: the site rounds its reset otherwise, so each answer's own stands.
    private narrow = true;

    /**
     * An answer at `now`, to a request sent at `sentAt` (when known), announced `remaining` requests
     * left and `resetMs` to the reset. Answers when the reset is at the latest, or undefined when the
     * answer is from a window already over.
     */
    note(now: number, sentAt: number | undefined, remaining: number, resetMs: number): number | undefined {
        const sent = sentAt ?? now;
        if (sent < this.windowFrom) return undefined;
        // More left than last announced, or sent once the window's reset had passed: a later window.
        if (remaining > this.remaining || sent >= this.earliest) {
            this.windowFrom = sent;
            this.earliest = Number.POSITIVE_INFINITY;
        }
        this.remaining = remaining;
        this.earliest = Math.min(this.earliest, now + resetMs);
        return this.narrow ? this.earliest : now + resetMs;
    }

    /** The site refused a request: its reset may not round up, so no answer's is narrowed by another's. */
    refused(): void {
        this.narrow = false;
    }
}
