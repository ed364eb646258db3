import type { LogEntry } from '@crawlee-throttling/polite-web';

const PAGE_PATH = /^\/page\/(0|[1-9]\d*)$/;

/** Counts of what the server answered, folded out of its log. */
export interface ServerCounts {
    requests: number;
    refusals: number;
    resets: number;
}

/**
 * Which URLs of the soak's sites were enqueued, seen by the server, handled and failed, kept in fixed-size
 * arrays (one slot per site page, `/` included) so the bookkeeping itself does not grow the heap the soak
 * watches. URLs outside the sites' page space are counted apart.
 */
export class SoakLedger {
    private readonly index = new Map<string, number>();
    private readonly enqueuedAt: Uint8Array;
    private readonly seenAt: Uint8Array;
    private readonly handledAt: Uint8Array;
    private readonly failedAt: Uint8Array;
    readonly server: ServerCounts = { requests: 0, refusals: 0, resets: 0 };
    /** URLs that fit no slot (should stay 0). */
    unexpected = 0;
    /** Distinct URLs enqueued so far: what the queues must hold. */
    distinctEnqueued = 0;

    constructor(
        hosts: readonly string[],
        private readonly pages: number,
    ) {
        hosts.forEach((host, i) => this.index.set(host, i));
        const slots = hosts.length * (pages + 1);
        this.enqueuedAt = new Uint8Array(slots);
        this.seenAt = new Uint8Array(slots);
        this.handledAt = new Uint8Array(slots);
        this.failedAt = new Uint8Array(slots);
    }

    enqueued(url: string): void {
        const slot = this.slotOfUrl(url);
        if (slot >= 0 && !this.enqueuedAt[slot]) this.distinctEnqueued += 1;
        this.bump(this.enqueuedAt, slot, 1);
    }

    handled(url: string): void {
        this.bump(this.handledAt, this.slotOfUrl(url));
    }

    failed(url: string): void {
        this.bump(this.failedAt, this.slotOfUrl(url));
    }

    /** Folds server log entries in (robots.txt left out: it is the throttler's, not a crawl request). */
    fold(entries: readonly LogEntry[]): void {
        for (const e of entries) {
            if (e.path === '/robots.txt') continue;
            this.server.requests += 1;
            if (e.status === 429 || e.status === 503) this.server.refusals += 1;
            if (e.reset) this.server.resets += 1;
            this.bump(this.seenAt, this.slot(e.site, e.path), 1);
        }
    }

    /** Totals over all slots. */
    summary() {
        let enqueued = 0;
        let seen = 0;
        let handled = 0;
        let failed = 0;
        let lost = 0;
        let handledTwice = 0;
        let handledAndFailed = 0;
        let seenNotEnqueued = 0;
        for (let i = 0; i < this.enqueuedAt.length; i += 1) {
            const known = this.enqueuedAt[i] || this.seenAt[i];
            enqueued += this.enqueuedAt[i];
            seen += this.seenAt[i];
            handled += this.handledAt[i] ? 1 : 0;
            failed += this.failedAt[i] ? 1 : 0;
            if (known && !this.handledAt[i] && !this.failedAt[i]) lost += 1;
            if (this.handledAt[i] > 1) handledTwice += 1;
            if (this.handledAt[i] && this.failedAt[i]) handledAndFailed += 1;
            if (this.seenAt[i] && !this.enqueuedAt[i]) seenNotEnqueued += 1;
        }
        return { enqueued, seen, handled, failed, lost, handledTwice, handledAndFailed, seenNotEnqueued };
    }

    private slotOfUrl(url: string): number {
        try {
            const u = new URL(url);
            return this.slot(u.hostname, u.pathname);
        } catch {
            return -1;
        }
    }

    private slot(host: string, path: string): number {
        const site = this.index.get(host);
        if (site === undefined) return -1;
        if (path === '/') return site * (this.pages + 1);
        const match = PAGE_PATH.exec(path);
        const n = match ? Number(match[1]) : NaN;
        return n < this.pages ? site * (this.pages + 1) + 1 + n : -1;
    }

    /** Adds one (saturating) or sets to `value`; a URL without a slot is counted as unexpected. */
    private bump(counts: Uint8Array, slot: number, value?: number): void {
        if (slot < 0) {
            this.unexpected += 1;
            return;
        }
        counts[slot] = value ?? Math.min(255, counts[slot] + 1);
    }
}
