import type { DomainQueue } from '../queues/domain-queue';
import { originOf } from '../routing/origin';

/**
 * Runs for each origin of a domain before the first dispatch to that origin (e.g. reading its
 * robots.txt), and again once its last check is older than the gate's `recheckAfterMs`; the domain
 * is held back, without blocking any fetch, until the promise settles.
 */
export type DomainGate = (domainKey: string, firstUrl: string) => Promise<void | DomainGateOutcome>;

/**
 * What a check may answer: `'retry'` when it learned nothing (robots.txt answered 429). The origin is
 * then checked once more before its next request, which waits for the backoff the answer caused;
 * a second `'retry'` counts as checked.
 */
export type DomainGateOutcome = 'retry';

/** Options of `ThrottlingRequestManager.setDomainGate`. */
export interface DomainGateOptions {
    /**
     * Run the check of an origin again before dispatching to it once this long has passed since the
     * last one (RFC 9309: a robots.txt should not be cached for more than 24 hours).
     * @default Infinity (once per origin and process)
     */
    recheckAfterMs?: number;
}

/** What the gate needs from its owner: the time, and a way to say a domain may be scheduled again. */
export interface OriginGateHost {
    now(): number;
    /** The domain's checks settled: file it again and wake the crawler. */
    released(entry: DomainQueue): void;
    warn(message: string): void;
}

/**
 * Holds a domain back while the check of one of its origins (robots.txt) runs, and decides when an
 * origin is due for a check: first contact, a stale check, or the one retry of a check that learned
 * nothing.
 */
export class OriginGate {
    // The check to run; undefined until the crawler integration sets one.
    private gate?: DomainGate;
    // How old an origin's check may get before it runs again.
    private recheckAfterMs = Infinity;

    constructor(private readonly host: OriginGateHost) {}

    set(gate: DomainGate | undefined, options: DomainGateOptions = {}): void {
        this.gate = gate;
        this.recheckAfterMs = options.recheckAfterMs ?? Infinity;
    }

    /**
     * Whether the origin of `url` must be checked before a request to it goes out. A retry of a check
     * that learned nothing is due only `atDispatch`, once the backoff its answer caused has passed.
     */
    isDue(entry: DomainQueue, url: string, now: number, atDispatch = false): boolean {
        if (!this.gate) return false;
        const origin = originOf(url);
        if (atDispatch && entry.retryPending.has(origin)) return true;
        const checkedAt = entry.checkedOrigins.get(origin);
        return checkedAt === undefined || now - checkedAt >= this.recheckAfterMs;
    }

    /** Starts the check of the origin of `url` if it is due, holding the domain back until it settles. */
    checkIfDue(entry: DomainQueue, url: string, atDispatch = false): void {
        const gate = this.gate;
        const now = this.host.now();
        if (!gate || !this.isDue(entry, url, now, atDispatch)) return;
        const origin = originOf(url);
        entry.retryPending.delete(origin);
        entry.checkedOrigins.set(origin, now);
        entry.gatesPending += 1;
        const release = (outcome?: void | DomainGateOutcome) => {
            if (outcome === 'retry' && !entry.retriedOrigins.has(origin)) {
                entry.retriedOrigins.add(origin);
                entry.retryPending.add(origin);
            }
            // Counted from when the answer came, so the next check finds the robots.txt cache expired too.
            entry.checkedOrigins.set(origin, this.host.now());
            entry.gatesPending -= 1;
            this.host.released(entry);
        };
        gate(entry.key, url).then(release, (error: unknown) => {
            this.host.warn(
                `The first-dispatch check of ${origin} (${entry.key}) failed; crawling it without: ${String(error)}`,
            );
            release();
        });
    }
}
