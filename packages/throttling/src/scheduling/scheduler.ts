import type { DomainQueue } from '../core/domain-queue';
import { MinHeap } from './min-heap';

/** A domain filed in the waiting heap; stale once the domain is filed otherwise (another item, or none). */
interface HeapItem {
    entry: DomainQueue;
}

/** Where a domain is filed: in the ring, or in the heap by the one item of it that counts. */
type Filing = 'ring' | HeapItem;

/** What the scheduler asks about a domain; answered by the pacing state and the origin gate. */
export interface SchedulingView {
    /** When the domain may hand out next; Infinity while every slot is busy. */
    readyAt(entry: DomainQueue, now: number): number;
    /** Called when a domain with work is held by its slots alone (rampup listens). */
    slotBound(entry: DomainQueue, now: number): void;
    /** Whether origin checks are running for the domain and none is due: it waits for them, unfiled (the origin gate). */
    checksRunning(entry: DomainQueue): boolean;
}

/**
 * Orders domains with work: a ring of ready ones, served round-robin so none is drained first, and
 * a heap of waiting ones by when their clocks run out. {@link touch} is the one entry point for
 * "this domain changed"; the rest never block and never touch storage.
 */
export class Scheduler {
    // Domains with work that are ready now.
    private readonly ring: DomainQueue[] = [];
    // Domains with work that wait for a clock, by ready time.
    private readonly waiting = new MinHeap<HeapItem>();
    // Where each filed domain is, so none is filed twice and stale heap items are known; absent: not filed.
    private readonly filings = new Map<DomainQueue, Filing>();

    constructor(private readonly view: SchedulingView) {}

    /** Files a domain with work where it belongs (ring or heap) unless it is filed already. */
    touch(entry: DomainQueue, now: number): void {
        if (entry.queued <= 0 || this.filings.has(entry) || this.view.checksRunning(entry)) return;
        const readyAt = this.view.readyAt(entry, now);
        // All slots busy: a completion touches the domain again.
        if (readyAt === Number.POSITIVE_INFINITY) {
            this.view.slotBound(entry, now);
            return;
        }
        if (readyAt <= now) {
            this.filings.set(entry, 'ring');
            this.ring.push(entry);
        } else {
            const item = { entry };
            this.filings.set(entry, item);
            this.waiting.push(readyAt, item);
        }
    }

    /** Whether the domain is filed (in the ring or the heap). */
    isFiled(entry: DomainQueue): boolean {
        return this.filings.has(entry);
    }

    /** Files a domain again after its clocks moved earlier (its heap item would be too late). */
    refile(entry: DomainQueue, now: number): void {
        const filing = this.filings.get(entry);
        // Its heap item goes stale: it no longer is the domain's filing.
        if (filing !== undefined && filing !== 'ring') this.filings.delete(entry);
        this.touch(entry, now);
    }

    /** Lifts every hold (`blockedUntil`) still running and files its domain again: what held it may be gone. */
    releaseHolds(entries: Iterable<DomainQueue>, now: number): void {
        for (const entry of entries) {
            if (entry.blockedUntil <= now) continue;
            entry.liftHold();
            this.refile(entry, now);
        }
    }

    /** The first ready domain with work, re-filing stale ring entries in front of it. */
    firstReady(now: number): DomainQueue | undefined {
        this.promoteDue(now);
        while (this.ring.length > 0) {
            const entry = this.ring[0];
            if (this.isServable(entry, now)) return entry;
            this.ring.shift();
            this.filings.delete(entry);
            this.touch(entry, now);
        }
        return undefined;
    }

    /** Takes the next ready domain with work off the ring, re-filing stale entries. */
    takeReady(now: number): DomainQueue | undefined {
        this.promoteDue(now);
        for (;;) {
            const entry = this.ring.shift();
            if (!entry) return undefined;
            this.filings.delete(entry);
            if (entry.queued <= 0 || this.view.checksRunning(entry)) continue;
            if (this.view.readyAt(entry, now) > now) {
                this.touch(entry, now);
                continue;
            }
            return entry;
        }
    }

    /** Earliest time a domain with work becomes ready (now if one is), undefined when none waits. */
    nextReadyAt(now: number): number | undefined {
        this.promoteDue(now);
        // Ring entries whose clocks were pushed back by a signal are re-filed by their real time.
        for (const entry of this.ring.splice(0)) {
            this.filings.delete(entry);
            this.touch(entry, now);
        }
        if (this.ring.length > 0) return now;
        for (;;) {
            const key = this.waiting.peekKey();
            if (key === undefined) return undefined;
            const item = this.waiting.peek()!;
            if (this.filings.get(item.entry) !== item) {
                this.waiting.pop();
                continue;
            }
            if (this.view.readyAt(item.entry, now) <= key) return key;
            this.waiting.pop();
            this.filings.delete(item.entry);
            this.touch(item.entry, now);
        }
    }

    /** Forgets every filing (the queues were dropped). */
    clear(): void {
        this.ring.length = 0;
        this.waiting.clear();
        this.filings.clear();
    }

    private isServable(entry: DomainQueue, now: number): boolean {
        return entry.queued > 0 && !this.view.checksRunning(entry) && this.view.readyAt(entry, now) <= now;
    }

    /** Moves every domain whose clocks have run out from the heap to the ring. */
    private promoteDue(now: number): void {
        while (this.waiting.size > 0 && this.waiting.peekKey()! <= now) {
            const item = this.waiting.pop()!;
            if (this.filings.get(item.entry) !== item) continue;
            this.filings.delete(item.entry);
            this.touch(item.entry, now);
        }
    }
}
