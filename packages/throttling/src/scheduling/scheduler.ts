import type { DomainQueue } from '../core/domain-queue';
import { MinHeap } from './min-heap';

/** A domain filed in the waiting heap; stale once the domain was re-filed (another version). */
interface HeapItem {
    entry: DomainQueue;
    version: number;
}

/** What the scheduler asks about a domain; answered by the pacing state and the origin gate. */
export interface SchedulingView {
    /** When the domain may hand out next; Infinity while every slot is busy. */
    readyAt(entry: DomainQueue, now: number): number;
    /** Called when a domain with work is held by its slots alone (rampup listens). */
    slotBound(entry: DomainQueue, now: number): void;
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

    constructor(private readonly view: SchedulingView) {}

    /** Files a domain with work where it belongs (ring or heap) unless it is filed already. */
    touch(entry: DomainQueue, now: number): void {
        if (entry.queued <= 0 || entry.scheduled || (entry.gated && !entry.awaitsCheck)) return;
        const readyAt = this.view.readyAt(entry, now);
        // All slots busy: a completion touches the domain again.
        if (readyAt === Number.POSITIVE_INFINITY) {
            this.view.slotBound(entry, now);
            return;
        }
        if (readyAt <= now) {
            entry.scheduled = 'ring';
            this.ring.push(entry);
        } else {
            entry.scheduled = 'heap';
            this.waiting.push(readyAt, { entry, version: ++entry.heapVersion });
        }
    }

    /** Files a domain again after its clocks moved earlier (its heap item would be too late). */
    refile(entry: DomainQueue, now: number): void {
        if (entry.scheduled === 'heap') {
            entry.heapVersion += 1;
            entry.scheduled = undefined;
        }
        this.touch(entry, now);
    }

    /** Lifts every hold (`blockedUntil`) still running and files its domain again: what held it may be gone. */
    releaseHolds(entries: Iterable<DomainQueue>, now: number): void {
        for (const entry of entries) {
            if (entry.blockedUntil <= now) continue;
            entry.blockedUntil = 0;
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
            entry.scheduled = undefined;
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
            entry.scheduled = undefined;
            if (entry.queued <= 0 || (entry.gated && !entry.awaitsCheck)) continue;
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
            entry.scheduled = undefined;
            this.touch(entry, now);
        }
        if (this.ring.length > 0) return now;
        for (;;) {
            const key = this.waiting.peekKey();
            if (key === undefined) return undefined;
            const { entry, version } = this.waiting.peek()!;
            if (version !== entry.heapVersion || entry.scheduled !== 'heap') {
                this.waiting.pop();
                continue;
            }
            if (this.view.readyAt(entry, now) <= key) return key;
            this.waiting.pop();
            entry.scheduled = undefined;
            this.touch(entry, now);
        }
    }

    /** Forgets every filing (the queues were dropped). */
    clear(): void {
        this.ring.length = 0;
        this.waiting.clear();
    }

    private isServable(entry: DomainQueue, now: number): boolean {
        return entry.queued > 0 && (!entry.gated || entry.awaitsCheck) && this.view.readyAt(entry, now) <= now;
    }

    /** Moves every domain whose clocks have run out from the heap to the ring. */
    private promoteDue(now: number): void {
        while (this.waiting.size > 0 && this.waiting.peekKey()! <= now) {
            const { entry, version } = this.waiting.pop()!;
            if (version !== entry.heapVersion || entry.scheduled !== 'heap') continue;
            entry.scheduled = undefined;
            this.touch(entry, now);
        }
    }
}
