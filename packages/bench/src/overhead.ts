import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import {
    costPerRequestMs,
    MANAGER_LAYOUTS,
    type ManagerLayout,
    type MeasureSpec,
    type OverheadMeasurement,
} from './overhead-measure';

export { costPerRequestMs, MANAGER_LAYOUTS };
export type { ManagerLayout, OverheadMeasurement, OverheadStore } from './overhead-measure';

/** One B3 row: `domains` domains, `requests` requests spread over them round-robin. */
export interface OverheadSize {
    domains: number;
    requests: number;
    /** Time cap of each measurement of the row. */
    capMs: number;
    /** Layouts not measured at this size, each with the reason the table gives. */
    skipLayouts?: Partial<Record<ManagerLayout, string>>;
    /**
     * Measurements of the row, each of the bare queue then every layout, taken one after the other so
     * that a change in the machine's load hits a round's baseline too. @default 1
     */
    rounds?: number;
    /**
     * Add every request with `forefront: true`. memory-storage keeps handled requests in its queue's
     * table in the order they were added and walks that table from the front to list the head, so
     * with plain adds every listing walks every request handled so far; forefront requests are listed
     * from their own index, newest first, and handled ones are dropped from it as they are met.
     */
    forefront?: boolean;
    /**
     * Add this many requests, drain them, and again, as a crawl does (see MeasureSpec.batch). With
     * `forefront` this keeps memory-storage's head listing to about a batch. @default all at once
     */
    batch?: number;
}

export interface OverheadOptions {
    /** Rows of `requests` requests each (one per domain round-robin). */
    domainCounts: number[];
    requests: number;
    /** Rounds of each of those rows (see {@link OverheadSize.rounds}). @default 1 */
    rounds?: number;
    /** Further rows with their own sizes, e.g. 100,000 domains × 3 requests (`--broad`). */
    extraRows?: OverheadSize[];
    /** Stop a measurement after this long and report the part done. */
    capMs: number;
    /**
     * Stop a measurement when heapUsed passes this share of V8's heap limit (instead of crashing the
     * process) and report the part done.
     * @default 0.5
     */
    heapCapShare?: number;
}

/** The manager in one layout, against the bare queue of the same row. */
export interface LayoutMeasurement {
    layout: ManagerLayout;
    /** Why it was not measured at this size; then there are no figures. */
    notRun?: string;
    m?: OverheadMeasurement;
    /** Its cost per request over the bare queue's of the same round, the median over the rounds. */
    ratio: number;
    /** That ratio in each round. */
    ratios: number[];
    /** Heap with the last batch queued above the bare queue's of the same round, per domain met, in bytes (median over the rounds). */
    queuedPerDomainB: number;
    /** Heap kept once idle above the bare queue's of the same round, per domain, in bytes (median over the rounds). */
    retainedPerDomainB: number;
}

export interface OverheadRow {
    domains: number;
    requests: number;
    rounds: number;
    forefront: boolean;
    batch?: number;
    /** The bare queue's measurement with the median cost; each layout's likewise. */
    bare: OverheadMeasurement;
    layouts: LayoutMeasurement[];
}

const MB = 2 ** 20;
const CHILD = join(__dirname, '..', 'dist', 'overhead-child.js');

/**
 * Runs one measurement in a fresh Node process with `--expose-gc`: its heap holds nothing from the
 * measurements before it, so heap kept is read against a settled baseline of the same process.
 */
async function measureInChild(spec: MeasureSpec): Promise<OverheadMeasurement> {
    if (!existsSync(CHILD))
        throw new Error(`B3 runs its measurements in ${CHILD}: build the bench first (npm run build)`);
    return await new Promise((resolve, reject) => {
        const child = fork(CHILD, [JSON.stringify(spec)], {
            execArgv: ['--expose-gc'],
            stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        });
        let stderr = '';
        let result: OverheadMeasurement | undefined;
        child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('message', (message: { result: OverheadMeasurement }) => (result = message.result));
        child.on('error', reject);
        child.on('exit', (code, signal) => {
            if (result && code === 0) resolve(result);
            else
                reject(
                    new Error(
                        `B3 measurement ${JSON.stringify(spec)} ended with ${signal ?? `code ${code}`}: ${stderr.trim()}`,
                    ),
                );
        });
    });
}

/** add + fetch + mark handled through the manager in each layout vs a bare RequestQueue, per row. */
export async function runOverhead(options: OverheadOptions, progress: (line: string) => void): Promise<OverheadRow[]> {
    const heapCapShare = options.heapCapShare ?? 0.5;
    const sizes: OverheadSize[] = [
        ...options.domainCounts.map((domains) => ({
            domains,
            requests: options.requests,
            capMs: options.capMs,
            rounds: options.rounds,
        })),
        ...(options.extraRows ?? []),
    ];
    const rows: OverheadRow[] = [];
    for (const size of sizes) rows.push(await measureRow(size, heapCapShare, progress));
    return rows;
}

async function measureRow(
    size: OverheadSize,
    heapCapShare: number,
    progress: (line: string) => void,
): Promise<OverheadRow> {
    const { domains, requests, capMs, forefront = false, batch, skipLayouts = {} } = size;
    const rounds = size.rounds ?? 1;
    const label = `B3 ${domains} domains × ${requests} requests`;
    const spec = (store: MeasureSpec['store']): MeasureSpec => ({
        store,
        domains,
        requests,
        capMs,
        heapCapShare,
        forefront,
        batch,
    });
    const bares: OverheadMeasurement[] = [];
    const runs = new Map<ManagerLayout, { m: OverheadMeasurement; ratio: number; bare: OverheadMeasurement }[]>(
        MANAGER_LAYOUTS.map((l) => [l, []]),
    );
    const measured = MANAGER_LAYOUTS.filter((l) => skipLayouts[l] === undefined);
    for (let round = 1; round <= rounds; round++) {
        const of = rounds > 1 ? ` (round ${round}/${rounds})` : '';
        progress(`${label}: bare RequestQueue${of} …`);
        const bare = await measureInChild(spec('RequestQueue'));
        bares.push(bare);
        progress(`${label}${of}: bare ${bare.totalMs.toFixed(0)} ms, kept ${bare.retainedHeapMb.toFixed(1)} MB`);
        for (const layout of measured) {
            progress(`${label}: manager, ${layout}${of} …`);
            const m = await measureInChild(spec(layout));
            const ratio = costPerRequestMs(m) / costPerRequestMs(bare);
            runs.get(layout)!.push({ m, ratio, bare });
            progress(
                `${label}${of}: ${layout} ${m.totalMs.toFixed(0)} ms${m.capped ? ` (${m.capped} cap after ${m.added} adds, ${m.completed} handled)` : ''}, ratio ${ratio.toFixed(2)}, kept ${m.retainedHeapMb.toFixed(1)} MB`,
            );
        }
    }
    const bare = medianBy(bares, costPerRequestMs);
    const layouts = MANAGER_LAYOUTS.map((layout): LayoutMeasurement => {
        const notRun = skipLayouts[layout];
        if (notRun !== undefined)
            return { layout, notRun, ratio: NaN, ratios: [], queuedPerDomainB: NaN, retainedPerDomainB: NaN };
        const done = runs.get(layout)!;
        const perDomain = (m: OverheadMeasurement, mb: number) => (mb * MB) / Math.max(1, Math.min(domains, m.added));
        return {
            layout,
            m: medianBy(
                done.map((d) => d.m),
                costPerRequestMs,
            ),
            ratio: median(done.map((d) => d.ratio)),
            ratios: done.map((d) => d.ratio),
            queuedPerDomainB: median(done.map((d) => perDomain(d.m, d.m.queuedHeapMb - d.bare.queuedHeapMb))),
            retainedPerDomainB: median(done.map((d) => perDomain(d.m, d.m.retainedHeapMb - d.bare.retainedHeapMb))),
        };
    });
    return { domains, requests, rounds, forefront, batch, bare, layouts };
}

function median(values: readonly number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** The item whose `key` is the median (the lower one of an even count). */
function medianBy<T>(items: readonly T[], key: (item: T) => number): T {
    const sorted = [...items].sort((a, b) => key(a) - key(b));
    return sorted[Math.floor((sorted.length - 1) / 2)];
}
