/** One heap reading: ms since the soak started and heapUsed after a full GC, bytes. */
export interface HeapSample {
    atMs: number;
    heapUsed: number;
}

/** The sample closest to `fraction` (0…1) of the last sample's time. */
export function sampleAt(samples: readonly HeapSample[], fraction: number): HeapSample | undefined {
    if (samples.length === 0) return undefined;
    const target = samples[samples.length - 1].atMs * fraction;
    return samples.reduce((best, s) => (Math.abs(s.atMs - target) < Math.abs(best.atMs - target) ? s : best));
}

/** Least-squares slope of heapUsed over time for samples from `fromFraction` of the run on, MB per minute. */
export function heapSlopeMbPerMin(samples: readonly HeapSample[], fromFraction = 0.5): number {
    if (samples.length === 0) return NaN;
    const from = samples[samples.length - 1].atMs * fromFraction;
    const part = samples.filter((s) => s.atMs >= from);
    if (part.length < 2) return NaN;
    const mx = part.reduce((a, s) => a + s.atMs, 0) / part.length;
    const my = part.reduce((a, s) => a + s.heapUsed, 0) / part.length;
    let num = 0;
    let den = 0;
    for (const s of part) {
        num += (s.atMs - mx) * (s.heapUsed - my);
        den += (s.atMs - mx) ** 2;
    }
    return den === 0 ? NaN : ((num / den) * 60_000) / 2 ** 20;
}

const BARS = '▁▂▃▄▅▆▇█';

/** The samples as a one-line bar chart of `width` characters (each the mean of its share of samples). */
export function sparkline(values: readonly number[], width = 40): string {
    if (values.length === 0) return '';
    const buckets = Math.min(width, values.length);
    const means = Array.from({ length: buckets }, (_, b) => {
        const part = values.slice(
            Math.floor((b * values.length) / buckets),
            Math.floor(((b + 1) * values.length) / buckets),
        );
        return part.reduce((a, v) => a + v, 0) / part.length;
    });
    const lo = Math.min(...means);
    const hi = Math.max(...means);
    return means.map((v) => BARS[hi === lo ? 0 : Math.round(((v - lo) / (hi - lo)) * (BARS.length - 1))]).join('');
}
