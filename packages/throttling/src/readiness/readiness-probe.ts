import { heldLocally } from '../queues/domain-request-queue';
import type { IRequestManager } from '@crawlee/core';

import type { StalledDomain } from '../core/errors';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { DomainQueue } from '../core/domain-queue';
import type { DomainRegistry } from '../queues/domain-registry';
import type { Scheduler } from '../scheduling/scheduler';
import type { Clock } from '../core/clock';
import type { Adoption } from '../queues/shared-queue-discovery';
import type { Readiness } from './readiness';
import { readinessOf } from './readiness';

/** What the probe reads. */
export interface ReadinessProbeDeps {
    clock: Clock;
    registry: DomainRegistry;
    scheduler: Scheduler;
    states: DomainStateStore;
    maxDomainStallMs: number;
    /** When a domain's queue may hand out next (Infinity while its slots are busy). */
    readyAt(entry: DomainQueue, now: number): number;
    /** Whether `inner` has work a fetch could take now (not while the frontier window is full). */
    innerServable(): Promise<boolean>;
    /** Whether a background batch is still being added (to `queue`, when given): work may yet come. */
    landing(queue?: IRequestManager): boolean;
    /** Evicts idle domains under `queueLayout: 'shared'` (the pool polls here as the crawl winds down). */
    tidy(now: number): void;
    /** Requests of a domain waiting in the frontier window (always 0 under `'perDomain'`). */
    windowed(entry: DomainQueue): number;
    /** Nothing can be fetched now: arms the wake-up for when held-back work becomes ready. */
    idle(): void;
    /** The storage is shared live by several processes: others add to our domains' queues. */
    sharedLive?: boolean;
    /** Opens the domain queues other processes opened since this one looked. */
    adoptShared?(): Promise<Adoption>;
}

/**
 * On storage shared live, how often an idle poll asks the domain queues this process counts nothing
 * for whether others added to them. Other processes' links land in these queues unannounced; a
 * process that waited until it ran dry would leave its free slots idle beside them. A quarter
 * second keeps that idle time under a page's usual latency at a storage call per quiet queue.
 */
export const SHARED_SWEEP_MS = 250;

/**
 * On storage shared live, how often an idle poll looks for domain queues other processes opened (a
 * listing of the storage's queues): every second, and at most one listed queue per
 * {@link SHARED_ADOPT_MS_PER_QUEUE} on average, so a storage of many queues is listed less often.
 * Their domains are ones this process never met: without the look it would serve them only once its
 * own work ran out, however long the others take.
 */
export const SHARED_ADOPT_MS = 1_000;
export const SHARED_ADOPT_MS_PER_QUEUE = 20;

/**
 * Tells where the crawl stands without blocking: ready > stalled > waiting > finished. Runs on every
 * idle poll of the pool, so it asks a domain queue (a storage call; an API call on the Apify
 * platform) only before calling that domain stalled or the crawl finished.
 */
export class ReadinessProbe {
    // When the quiet queues were last asked for work other processes added (storage shared live).
    private sweptAt = -Infinity;
    // When the storage may next be listed for domain queues other processes opened (storage shared live).
    private adoptAt = -Infinity;

    constructor(private readonly deps: ReadinessProbeDeps) {}

    /** Whether nothing can be fetched now, though work may still wait for a clock. */
    async isEmpty(): Promise<boolean> {
        const now = this.deps.clock.now();
        this.deps.tidy(now);
        if (this.deps.scheduler.firstReady(now)) return false;
        if (this.deps.sharedLive && now - this.sweptAt >= SHARED_SWEEP_MS) {
            this.sweptAt = now;
            if (this.deps.adoptShared && now >= this.adoptAt) {
                this.adoptAt = Infinity;
                let listed = 0;
                try {
                    ({ listed } = await this.deps.adoptShared());
                } finally {
                    this.adoptAt = now + Math.max(SHARED_ADOPT_MS, listed * SHARED_ADOPT_MS_PER_QUEUE);
                }
            }
            await this.uncountedWork(now, true);
            if (this.deps.scheduler.firstReady(now)) return false;
        }
        const empty = !(await this.deps.innerServable());
        if (empty) this.deps.idle();
        return empty;
    }

    async check(): Promise<Readiness> {
        const { registry, scheduler, clock } = this.deps;
        const inner = await registry.getInner();
        const now = clock.now();
        if (scheduler.firstReady(now)) return readinessOf('ready');
        if (await this.deps.innerServable()) return readinessOf('ready');

        // Domains we count work for are unfinished without asking their queues.
        const counted = [...registry.all()].filter(
            (e) => holdsAny(e, this.deps.windowed(e)) && (e.queued > 0 || this.inFlight(e) > 0),
        );
        const stalled = await this.stalledAmong(counted, now);
        if (scheduler.firstReady(now)) return readinessOf('ready');
        if (stalled.length > 0) return readinessOf('stalled', { domains: stalled });

        let { readyAt, inFlight } = this.waitingSummary(counted, now);
        if (readyAt === null && inFlight === 0) {
            const found = await this.uncountedWork(now);
            if (scheduler.firstReady(now)) return readinessOf('ready');
            ({ readyAt, inFlight } = this.waitingSummary(found, now));
        }
        const innerFinished = !this.deps.landing() && (await inner.isFinished());
        if (readyAt !== null || inFlight > 0 || !innerFinished) return readinessOf('waiting', { readyAt, inFlight });
        return readinessOf('finished');
    }

    /** Requests of a domain in flight, as its pacing state counts them (one count per scope). */
    inFlight(entry: DomainQueue): number {
        return this.deps.states.read(entry.key)?.inFlight ?? 0;
    }

    /** Domains refusing without a break for longer than the window; asked first whether work is real. */
    private async stalledAmong(counted: DomainQueue[], now: number): Promise<StalledDomain[]> {
        const stalled: StalledDomain[] = [];
        for (const entry of counted) {
            const stalledForMs =
                entry.queued > 0 ? (this.deps.states.read(entry.key)?.backoff.stalledForMs(now) ?? 0) : 0;
            if (stalledForMs <= this.deps.maxDomainStallMs) continue;
            // Ending the crawl is for real work only: our count may be ahead of the queue.
            if (!(await holdsWork(entry, this.deps.windowed(entry)))) entry.recount(0);
            else stalled.push({ domain: entry.key, stalledForMs, queued: entry.queued });
        }
        return stalled;
    }

    /**
     * Asks the quiet queues whether they hold work we did not count (locked by a dead process, or
     * added behind our back), and schedules what they hold: before calling the crawl finished, and
     * with `busyToo` on an idle poll of shared storage, where domains with requests in flight count
     * as quiet too and only work this process could lock counts as found.
     */
    private async uncountedWork(now: number, busyToo = false): Promise<DomainQueue[]> {
        // A queue still receiving a batch is counted as each part lands: it is waiting, not holding
        // uncounted work (its storage would say unfinished while nothing is pending yet).
        const quiet = [...this.deps.registry.all()].filter(
            (e) => e.opened && e.queued === 0 && (busyToo || this.inFlight(e) === 0) && !this.deps.landing(e.opened),
        );
        const verdicts = await Promise.all(quiet.map(async (e) => ({ e, finished: await e.opened!.isFinished() })));
        const found = verdicts.filter((v) => !v.finished && (!busyToo || lockedHere(v.e) > 0)).map((v) => v.e);
        for (const entry of found) {
            // Probe it again once its clocks allow.
            entry.recount(busyToo ? lockedHere(entry) : Math.max(1, entry.opened!.getPendingCount()));
            this.deps.scheduler.touch(entry, now);
        }
        return found;
    }

    /** The earliest time one of `entries` with queued work becomes ready, and their requests in flight. */
    private waitingSummary(entries: DomainQueue[], now: number): { readyAt: number | null; inFlight: number } {
        let readyAt: number | null = null;
        let inFlight = 0;
        for (const entry of entries) {
            inFlight += this.inFlight(entry);
            if (entry.queued <= 0) continue;
            const at = this.deps.readyAt(entry, now);
            if (readyAt === null || at < readyAt) readyAt = at;
        }
        return { readyAt, inFlight };
    }
}

/** Whether a domain has anywhere to keep requests: its own queue, or a line in the frontier window. */
function holdsAny(entry: DomainQueue, windowed: number): boolean {
    return entry.opened !== undefined || windowed > 0;
}

/** Whether a domain really holds work: a request in its window line (exact), or one its queue has left. */
async function holdsWork(entry: DomainQueue, windowed: number): Promise<boolean> {
    if (windowed > 0) return true;
    return entry.opened !== undefined && !(await entry.opened.isFinished());
}

/** Requests `entry`'s queue holds locked for this process; a queue that cannot say counts as one. */
function lockedHere(entry: DomainQueue): number {
    return heldLocally(entry.opened) ?? 1;
}
