import { memoryConfig } from '@crawlee-throttling/crawler-processes';
import type { Configuration, IRequestManager } from '@crawlee/core';
import { RequestQueue } from '@crawlee/core';
import { getHeapStatistics } from 'node:v8';
import { ThrottlingRequestManager } from 'crawlee-throttling';

import { collectGarbage, MemoryPeak, sleep } from './stats';

/** What B3 measures: the bare queue, and the manager in each queue layout. */
export type OverheadStore = 'RequestQueue' | ManagerLayout;
export type ManagerLayout = 'perDomain' | 'shared';
export const MANAGER_LAYOUTS: readonly ManagerLayout[] = ['perDomain', 'shared'];

/** One measurement: `requests` requests over `domains` domains (round-robin) through `store`. */
export interface MeasureSpec {
    store: OverheadStore;
    domains: number;
    requests: number;
    /** Stop after this long and report the part done. */
    capMs: number;
    /** Stop when heapUsed passes this share of V8's heap limit and report the part done. */
    heapCapShare: number;
    /** Add with `forefront: true` (see OverheadSize.forefront). */
    forefront?: boolean;
    /**
     * Add this many, then drain them, and again, as a crawl interleaves discovery and fetching; without
     * it every request is added before the first fetch.
     */
    batch?: number;
}

export interface OverheadMeasurement {
    store: OverheadStore;
    domains: number;
    /** Requests asked for. */
    requests: number;
    /** Requests added, and the ones fetched and marked handled, before the cap (if any). */
    added: number;
    completed: number;
    /** Fetches of a request already handled in this measurement (counted in `completed`); with none, every request added was handled. */
    handledTwice: number;
    addMs: number;
    drainMs: number;
    totalMs: number;
    /** Most requests added and not yet handled at once: the batch, or every request without one. */
    maxBacklog: number;
    /** Fetches that came back empty while work remained (the loop then yields and tries again). */
    emptyFetches: number;
    peakRssMb: number;
    /**
     * Settled heapUsed (see {@link settledHeapUsed}) once the last batch is added, before it is drained
     * (every request, without batches), above the settled heap at the start: what the store holds with
     * work waiting. Read outside the timed phases.
     */
    queuedHeapMb: number;
    /**
     * Settled heapUsed (see {@link settledHeapUsed}) at the end, every request handled and the store
     * still alive, above the settled heap at the start: what an idle crawl of this size keeps.
     */
    retainedHeapMb: number;
    /** Why the measurement stopped early, if it did. */
    capped: false | 'time' | 'memory';
}

const MB = 2 ** 20;

function urlOf(i: number, domains: number): string {
    return `http://d${i % domains}.bench.example/r/${i}`;
}

/** The index `urlOf` put in the URL. */
function indexOf(url: string): number {
    return Number(url.slice(url.lastIndexOf('/') + 1));
}

/**
 * heapUsed once garbage collection has nothing more to free: full GCs from fresh tasks (so nothing on
 * the current stack keeps garbage alive, and finalizers and weak references get their turn) until a
 * GC frees under 64 KB, at most eight. One GC can leave what a finalizer released for the next.
 */
export async function settledHeapUsed(): Promise<number> {
    let previous = Infinity;
    for (let i = 0; i < 8; i++) {
        await sleep(10);
        collectGarbage();
        const now = process.memoryUsage().heapUsed;
        if (previous - now < 64 * 1024) return now;
        previous = now;
    }
    return previous;
}

/**
 * Runs one measurement in this process. B3 runs each in a fresh child process (see overhead.ts), so
 * that the heap it keeps is not mixed with what earlier measurements left behind.
 */
export async function measure(spec: MeasureSpec): Promise<OverheadMeasurement> {
    const { store, domains, requests, capMs, heapCapShare, forefront = false } = spec;
    const batch = spec.batch ?? requests;
    const startHeap = await settledHeapUsed();
    const config = memoryConfig();
    // Every RequestQueue adds listeners to its configuration's event manager; with one queue per domain
    // the emitter would warn about a leak at 51 queues. The count is expected here, so raise the limit.
    (
        config.getEventManager() as unknown as { events?: { setMaxListeners?(n: number): void } }
    ).events?.setMaxListeners?.(0);
    const memory = new MemoryPeak();
    const queue: IRequestManager =
        store === 'RequestQueue' ? await RequestQueue.open(null, { config }) : managerFor(store, domains, config);

    const heapCap = getHeapStatistics().heap_size_limit * heapCapShare;
    const started = performance.now();
    const deadline = started + capMs;
    let added = 0;
    let completed = 0;
    let addMs = 0;
    let drainMs = 0;
    let maxBacklog = 0;
    let emptyFetches = 0;
    let emptyInARow = 0;
    // One byte per request, the same in every store, so the heap figures are not skewed by it.
    const handled = new Uint8Array(requests);
    let handledTwice = 0;
    let capped: OverheadMeasurement['capped'] = false;
    let queuedHeapMb = NaN;
    let settlingMs = 0;
    while (added < requests && !capped) {
        const addFrom = performance.now();
        const until = Math.min(requests, added + batch);
        while (added < until) {
            await queue.addRequest({ url: urlOf(added, domains) }, forefront ? { forefront } : undefined);
            added++;
            // Checked often: a new domain may cost megabytes (see the B3 notes), and running out of heap kills the run.
            if ((added & 15) === 0) {
                memory.sample();
                if (memory.peakHeap > heapCap) capped = 'memory';
                else if (performance.now() > deadline) capped = 'time';
                if (capped) break;
            }
        }
        addMs += performance.now() - addFrom;
        memory.sample();
        maxBacklog = Math.max(maxBacklog, added - completed);
        if (added >= requests || capped) {
            const settleFrom = performance.now();
            queuedHeapMb = ((await settledHeapUsed()) - startHeap) / MB;
            settlingMs += performance.now() - settleFrom;
        }
        const drainFrom = performance.now();

        while (completed < added) {
            const request = await queue.fetchNextRequest();
            if (!request) {
                emptyFetches++;
                if (++emptyInARow > 10_000)
                    throw new Error(
                        `${store}: fetchNextRequest keeps returning null with ${added - completed} requests left`,
                    );
                await sleep(0);
                continue;
            }
            emptyInARow = 0;
            const index = indexOf(request.url);
            if (handled[index]) handledTwice++;
            handled[index] = 1;
            await queue.markRequestHandled(request);
            completed++;
            if ((completed & 255) === 255) {
                memory.sample();
                if (performance.now() > deadline) {
                    capped ||= 'time';
                    break;
                }
            }
        }
        drainMs += performance.now() - drainFrom;
    }
    const ended = performance.now();
    memory.sample();
    const retainedHeapMb = ((await settledHeapUsed()) - startHeap) / MB;
    // Alive up to here, so the figure above counts what it keeps.
    if (queue.getTotalCount() < 0) throw new Error('unreachable');
    return {
        store,
        domains,
        requests,
        added,
        completed,
        handledTwice,
        addMs,
        drainMs,
        totalMs: ended - started - settlingMs,
        maxBacklog,
        emptyFetches,
        peakRssMb: memory.peakRss / MB,
        queuedHeapMb,
        retainedHeapMb,
        capped,
    };
}

/**
 * The manager under test: `'perDomain'` with room for every domain (its default of 100 would throw),
 * `'shared'` with its defaults (10,000 domains kept, idle ones evicted past that).
 */
function managerFor(layout: ManagerLayout, domains: number, config: Configuration): ThrottlingRequestManager {
    const options =
        layout === 'perDomain'
            ? { domains: 'all' as const, maxThrottledDomains: Math.max(100, domains), respectCrawlDelay: false }
            : { domains: 'all' as const, queueLayout: 'shared' as const, respectCrawlDelay: false };
    return new ThrottlingRequestManager(options, config);
}

/** Cost of one request (one add, one fetch, one mark handled); a capped run is costed by the parts it did. */
export function costPerRequestMs(m: OverheadMeasurement): number {
    return m.addMs / Math.max(1, m.added) + m.drainMs / Math.max(1, m.completed);
}
