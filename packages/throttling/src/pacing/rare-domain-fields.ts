/**
 * The fields of a domain's pacing state that stay 0 until the domain is refused, announces a limit,
 * spends a quota or fails to answer: the backoff clock and its bookkeeping, the announced pace, the
 * quota window, the error run and the refusal statistics. Most domains of a broad crawl never need
 * them, so `DomainStateRecord` makes this record on the first write of anything but 0 (18 numbers a
 * domain would otherwise carry; a number field that once held a fraction or an epoch time is boxed,
 * 16 bytes more, in every state).
 */
export class RareDomainFields {
    backoffUntil = 0;
    backoffExponent = 0;
    lastBackoffMs = 0;
    decayAt = 0;
    refusingSince = 0;
    lastRefusalAt = 0;
    stallMs = 0;
    lastImposedMs = 0;
    penaltyMs = 0;
    lastTriggerAt = 0;
    announcedIntervalMs = 0;
    announcedUntil = 0;
    quotaWindowStart = 0;
    quotaSpent = 0;
    refusals = 0;
    consecutiveErrors = 0;
    backedOffMs = 0;
    freeRetries = 0;
}
