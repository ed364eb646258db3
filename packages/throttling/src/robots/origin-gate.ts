import type { DomainQueue } from '../core/domain-queue';
import { originOf } from '../routing/origin';
import type { MaybePromise } from '../core/maybe-promise';
import { isPromise } from '../core/maybe-promise';
import type { OriginBook } from './origin-book';
import { OriginBooks } from './origin-books';

/**
 * Runs for each origin of a domain before the first dispatch to that origin (e.g. reading its
 * robots.txt), and again once its last check is older than the gate's `recheckAfterMs`; the domain
 * is held back, without blocking any fetch, until the promise settles. `attempt.retriesLeft` says how
 * many more times a `'retry'` answer would be honoured for this origin (0: this is the last try).
 */
export type DomainGate = (
    domainKey: string,
    firstUrl: string,
    attempt: DomainGateAttempt,
) => Promise<void | DomainGateOutcome>;

/** What a gate is told about the check it runs. */
export interface DomainGateAttempt {
    /** Retries still allowed for this origin after this check (`maxRetries` minus those already made). */
    retriesLeft: number;
}

/**
 * What a check may answer:
 * - `'retry'` when it learned nothing (robots.txt answered 429 or 5xx, or not at all). The origin is
 *   checked again before its next request, which waits for the backoff the answer caused; past
 *   `maxRetries` retries in a row, a `'retry'` counts as checked.
 * - `{ disallowForMs, reason }`: the origin's requests fail without being sent (`RobotsUnreachableError`)
 *   for that long; then it is checked again.
 */
export type DomainGateOutcome = 'retry' | DomainGateDisallow;

/** A check's answer that the origin must not be crawled for a while (robots.txt stayed unreachable). */
export interface DomainGateDisallow {
    disallowForMs: number;
    /** What the check met, e.g. `answered 503`; it goes into the requests' errors. */
    reason: string;
}

/**
 * Most origins whose last check one key remembers. A key spanning subdomains (`registrableDomain`)
 * met on a broad crawl would otherwise remember every one of them for the life of the process; an
 * origin forgotten early is checked once more (and its robots.txt is likely still cached).
 */
export const MAX_CHECKED_ORIGINS_PER_KEY = 1_000;

/** Options of `ThrottlingRequestManager.setDomainGate`. */
export interface DomainGateOptions {
    /**
     * Run the check of an origin again before dispatching to it once this long has passed since the
     * last one (RFC 9309: a robots.txt should not be cached for more than 24 hours).
     * @default Infinity (once per origin and process)
     */
    recheckAfterMs?: number;
    /**
     * Most `'retry'` answers honoured in a row for one origin; the next one counts as checked. A
     * check that answers otherwise starts the count again.
     * @default 1
     */
    maxRetries?: number;
}

/** What the gate needs from its owner: the time, the key's pace, and a way to reschedule a domain. */
export interface OriginGateHost {
    now(): number;
    /** When the key may send next (its clocks and slots), as for a request. */
    readyAt(entry: DomainQueue, now: number): number;
    /** Takes a window and a slot of the key for a probe; undefined when another process holds it. */
    openProbe(entry: DomainQueue, now: number): MaybePromise<ProbeTicket | undefined>;
    /** The probe got its answer (or none): frees its slot, re-arms a one-at-a-time interval. */
    finishProbe(ticket: ProbeTicket): void;
    /** The domain may be scheduled again (a check is due, or settled): file it and wake the crawler. */
    released(entry: DomainQueue): void;
    warn(message: string): void;
}

/** The window a probe took; opaque to the gate. */
export interface ProbeTicket {
    readonly entry: DomainQueue;
}

/**
 * Holds a domain back while the check of one of its origins (robots.txt) is due or runs, decides
 * when an origin is due (first contact, a stale check, a retry of a check that learned nothing, or
 * the end of a block), and starts checks at the key's pace: each takes a window and a slot like a
 * request, so the robots.txt files of many subdomains under one key are not fetched all at once.
 * Retries are bounded (`maxRetries` in a row); a check may block its origin for a while instead.
 */
export class OriginGate {
    // The check to run; undefined until the crawler integration sets one.
    private gate?: DomainGate;
    // How old an origin's check may get before it runs again.
    private recheckAfterMs = Infinity;
    // 'retry' answers honoured in a row per origin.
    private maxRetries = 1;

    /** `books`: where the gate keeps its bookkeeping per key, which others read (made here unless shared). */
    constructor(
        private readonly host: OriginGateHost,
        readonly books: OriginBooks = new OriginBooks(),
    ) {}

    set(gate: DomainGate | undefined, options: DomainGateOptions = {}): void {
        this.gate = gate;
        this.recheckAfterMs = options.recheckAfterMs ?? Infinity;
        this.maxRetries = options.maxRetries ?? 1;
    }

    /**
     * Whether the origin of `url` must be checked before a request to it goes out. A retry of a check
     * that learned nothing is due only `atDispatch`, once the backoff its answer caused has passed. A
     * blocked origin is due when its block ends (its requests fail until then).
     */
    isDue(entry: DomainQueue, url: string, now: number, atDispatch = false): boolean {
        if (!this.gate) return false;
        const origin = originOf(url);
        const book = this.books.peek(entry);
        if (book?.checksDue?.has(origin)) return false;
        if (atDispatch && book?.retryPending?.has(origin)) return true;
        const block = book?.blockedOrigins?.get(origin);
        if (block) return now >= block.until;
        const checkedAt = book?.checkedOrigins?.get(origin);
        return checkedAt === undefined || now - checkedAt >= this.recheckAfterMs;
    }

    /** Holds the domain for a check of the origin of `url` if one is due, and starts it when the pace allows. */
    checkIfDue(entry: DomainQueue, url: string, atDispatch = false): void {
        const now = this.host.now();
        if (!this.gate || !this.isDue(entry, url, now, atDispatch)) return;
        const origin = originOf(url);
        const book = this.books.of(entry);
        if (book.retryPending?.delete(origin) && book.retryPending.size === 0) book.retryPending = undefined;
        this.remember(book, origin, now);
        (book.checksDue ??= new Map()).set(origin, url);
        this.startDue(entry);
    }

    /** Starts the due checks of a domain that its key's clocks and slots allow now; files it for the rest. */
    startDue(entry: DomainQueue): void {
        const book = this.books.peek(entry) as OriginBook | undefined;
        if (!book) return;
        for (const [origin, url] of book.checksDue ?? []) {
            const now = this.host.now();
            if (!this.gate || this.host.readyAt(entry, now) > now) break;
            // Taken off the due list and counted as running at once, so a concurrent look skips it.
            book.checksDue!.delete(origin);
            if (book.checksDue!.size === 0) book.checksDue = undefined;
            book.gatesPending += 1;
            const opened = this.openProbe(entry, now);
            if (!isPromise(opened)) {
                if (!this.started(entry, origin, url, opened)) break;
                continue;
            }
            void opened.then((ticket) => {
                if (this.started(entry, origin, url, ticket)) this.startDue(entry);
            });
        }
        if (book.checksDue) this.host.released(entry);
    }

    /** Runs the check once its window is held; without one, puts it back on the due list (false). */
    private started(entry: DomainQueue, origin: string, url: string, ticket: ProbeTicket | undefined): boolean {
        const book = this.books.of(entry);
        if (!ticket || !this.gate) {
            book.gatesPending -= 1;
            (book.checksDue ??= new Map()).set(origin, url);
            this.host.released(entry);
            return false;
        }
        const settle = (outcome?: void | DomainGateOutcome) => this.settled(entry, origin, ticket, outcome);
        const retriesLeft = Math.max(0, this.maxRetries - (book.retriedOrigins?.get(origin) ?? 0));
        this.gate(entry.key, url, { retriesLeft }).then(settle, (error: unknown) => {
            this.host.warn(
                `The first-dispatch check of ${origin} (${entry.key}) failed; crawling it without: ${String(error)}`,
            );
            settle();
        });
        return true;
    }

    private openProbe(entry: DomainQueue, now: number): MaybePromise<ProbeTicket | undefined> {
        try {
            return this.host.openProbe(entry, now);
        } catch (error) {
            this.host.warn(`Could not reserve a window for the robots.txt check of ${entry.key}: ${String(error)}`);
            return undefined;
        }
    }

    private settled(entry: DomainQueue, origin: string, ticket: ProbeTicket, outcome?: void | DomainGateOutcome): void {
        this.host.finishProbe(ticket);
        const now = this.host.now();
        // A key forgotten meanwhile (its queues purged) keeps nothing of the answer.
        const book = this.books.peek(entry) as OriginBook | undefined;
        if (book) {
            this.record(book, origin, now, outcome);
            // Counted from when the answer came, so the next check finds the robots.txt cache expired too.
            this.remember(book, origin, now);
            book.gatesPending -= 1;
        }
        this.host.released(entry);
        this.startDue(entry);
    }

    /** What a check's answer leaves for the origin: a retry (while the bound allows), a block, or done. */
    private record(book: OriginBook, origin: string, now: number, outcome?: void | DomainGateOutcome): void {
        const retried = book.retriedOrigins?.get(origin) ?? 0;
        // A check ran, so an earlier block (over by now) is lifted; a new one may replace it below.
        unblock(book, origin);
        if (outcome === 'retry' && retried < this.maxRetries) {
            (book.retriedOrigins ??= new Map()).set(origin, retried + 1);
            (book.retryPending ??= new Set()).add(origin);
            return;
        }
        unretry(book, origin);
        if (typeof outcome !== 'object' || outcome === null) return;
        const { disallowForMs, reason } = outcome;
        if (!(disallowForMs > 0)) return;
        (book.blockedOrigins ??= new Map()).set(origin, { until: now + disallowForMs, reason, attempts: retried + 1 });
    }

    /**
     * Notes when an origin was checked, keeping the map in check-time order and at most
     * {@link MAX_CHECKED_ORIGINS_PER_KEY} long: stale checks (due again anyway) go first, then the oldest.
     */
    private remember(book: OriginBook, origin: string, at: number): void {
        const checked = (book.checkedOrigins ??= new Map());
        checked.delete(origin);
        checked.set(origin, at);
        if (checked.size <= MAX_CHECKED_ORIGINS_PER_KEY) return;
        for (const [known, checkedAt] of checked) {
            if (at - checkedAt >= this.recheckAfterMs) this.forgetOrigin(book, known);
        }
        for (const known of checked.keys()) {
            if (checked.size <= MAX_CHECKED_ORIGINS_PER_KEY) return;
            this.forgetOrigin(book, known);
        }
    }

    private forgetOrigin(book: OriginBook, origin: string): void {
        // A forgotten origin is checked again on its next request, blocked or not.
        book.checkedOrigins?.delete(origin);
        unretry(book, origin);
        unblock(book, origin);
    }
}

// The bookkeeping of an origin is dropped with its last entry (see `OriginBook`).

function unblock(book: OriginBook, origin: string): void {
    if (book.blockedOrigins?.delete(origin) && book.blockedOrigins.size === 0) book.blockedOrigins = undefined;
}

function unretry(book: OriginBook, origin: string): void {
    if (book.retriedOrigins?.delete(origin) && book.retriedOrigins.size === 0) book.retriedOrigins = undefined;
}
