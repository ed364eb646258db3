/**
 * What a response (or robots.txt) says about how fast a domain may be crawled. Recorded with
 * `ThrottlingRequestManager.recordPacingSignal()`.
 */
export type PacingSignal =
    /** The server refused: back off. `waitMs` is a server-given wait (Retry-After), if any. */
    | { reason: 'rateLimited'; url: string; waitMs?: number }
    /** The domain wants at least `intervalMs` between requests (robots.txt `Crawl-delay`). */
    | { reason: 'minInterval'; url: string; intervalMs: number }
    /** Raises the least interval of every throttled domain; never lowers it. */
    | { reason: 'minIntervalEverywhere'; intervalMs: number };
