/** Percentile (nearest-rank) of a list of numbers; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
    if (values.length === 0) return NaN;
    const sorted = [...values].sort((a, b) => a - b);
    const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
    return sorted[rank - 1];
}

/** Median of a list of numbers (the mean of the middle two of an even count); NaN when empty. */
export function median(values: readonly number[]): number {
    if (values.length === 0) return NaN;
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function mean(values: readonly number[]): number {
    return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs a full garbage collection when the runtime allows it (the bench asks V8 for it at start). */
export function collectGarbage(): void {
    const gc = (globalThis as { gc?: () => void }).gc ?? exposedGc;
    gc?.();
}

let exposedGc: (() => void) | undefined;

/** Makes `collectGarbage()` work without `--expose-gc` on the command line. */
export function exposeGc(): void {
    if ((globalThis as { gc?: () => void }).gc || exposedGc) return;
    try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const v8 = require('node:v8') as typeof import('node:v8');
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const vm = require('node:vm') as typeof import('node:vm');
        v8.setFlagsFromString('--expose-gc');
        exposedGc = vm.runInNewContext('gc') as () => void;
    } catch {
        exposedGc = undefined;
    }
}

/** Tracks peak rss and heapUsed; call `sample()` from hot loops (every few hundred operations). */
export class MemoryPeak {
    readonly startRss: number;
    readonly startHeap: number;
    peakRss: number;
    peakHeap: number;

    constructor() {
        const m = process.memoryUsage();
        this.startRss = this.peakRss = m.rss;
        this.startHeap = this.peakHeap = m.heapUsed;
    }

    sample(): void {
        const m = process.memoryUsage();
        if (m.rss > this.peakRss) this.peakRss = m.rss;
        if (m.heapUsed > this.peakHeap) this.peakHeap = m.heapUsed;
    }
}
