/** An origin whose robots.txt stayed unreachable: its requests fail without being sent until `until`. */
export interface OriginBlock {
    /** Epoch ms when the block ends and robots.txt is read again. */
    readonly until: number;
    /** What the last read met, e.g. `answered 503`. */
    readonly reason: string;
    /** Reads that failed in a row. */
    readonly attempts: number;
}

/**
 * What the origin gate keeps of one key's origins. The maps are made on first use and dropped once
 * empty: most keys of a broad crawl never need most of them.
 */
export interface OriginBook {
    /** Origin checks (robots.txt) running; the domain's requests wait while any runs. */
    gatesPending: number;
    /** Origin checks due but not started, by origin (the URL to check): each waits for the key's pace. */
    checksDue?: Map<string, string>;
    /** When each origin of the domain was last checked, so the check runs once per origin (and again when stale). */
    checkedOrigins?: Map<string, number>;
    /** Retries each origin's check has had in a row (robots.txt answered 429 or 5xx, or not at all). */
    retriedOrigins?: Map<string, number>;
    /** Origins whose robots.txt stayed unreachable through its retries, and until when (RFC 9309 §2.3.1.4). */
    blockedOrigins?: Map<string, OriginBlock>;
    /** Origins to check again before their next dispatch (that retry, not yet run). */
    retryPending?: Set<string>;
}
