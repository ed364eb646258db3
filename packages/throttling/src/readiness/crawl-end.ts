import { PersistentRateLimitError } from '../core/errors';
import type { ThrottlingEventEmitter } from '../core/throttling-events';
import type { WakeSignal } from './wake-signal';
import type { StatePersister } from '../persistence/state-persister';
import type { DomainReport } from './domain-report';
import type { Readiness } from './readiness';
import { formatStatistics } from './statistics';

/** What ending a crawl touches. */
export interface CrawlEndDeps {
    report: DomainReport;
    wake: WakeSignal;
    persister: StatePersister;
    events: ThrottlingEventEmitter;
    info(message: string): void;
}

/**
 * What the manager does when `isFinished()` finds the crawl over (finished, or a domain stalled):
 * logs the summary, stops the wake-up timer, saves the state and stops saving, and turns a stall
 * into `PersistentRateLimitError`.
 */
export class CrawlEnd {
    // The last summary logged, so an idle poll after the end does not repeat it.
    private lastSummary?: string;
    // Domains whose stall was announced and has not ended since: the crawler may ask `isFinished()`
    // again while it stops (each call throws), and listeners hear of one stall once.
    private announced = new Set<string>();

    constructor(private readonly deps: CrawlEndDeps) {}

    /**
     * Whether the crawl is finished.
     * @throws PersistentRateLimitError when `readiness` says a domain stalled.
     */
    async settle(readiness: Readiness): Promise<boolean> {
        if (readiness.status === 'stalled' || readiness.status === 'finished') {
            this.logSummary();
            this.deps.wake.clear();
            await this.deps.persister.save();
            this.deps.persister.stop();
        }
        if (readiness.status !== 'stalled') {
            this.announced.clear();
            return readiness.status === 'finished';
        }
        const stalledNow = new Set(readiness.domains.map((d) => d.domain));
        for (const d of readiness.domains)
            if (!this.announced.has(d.domain)) this.deps.events.emit('stalled', { ...d });
        this.announced = stalledNow;
        throw new PersistentRateLimitError(readiness.domains);
    }

    /** The end-of-crawl summary, once per finish, in the style of Crawlee's final statistics. */
    private logSummary(): void {
        const lines = formatStatistics(this.deps.report.stats());
        const summary = lines.join('\n  ');
        if (lines.length === 0 || summary === this.lastSummary) return;
        this.lastSummary = summary;
        this.deps.info(`Final throttling statistics per domain:\n  ${summary}`);
    }
}
