import { isRobotsPath, type LogEntry } from '@crawlee-throttling/polite-web';
import { percentile } from './stats';

/**
 * Why B8's paced sites refused: for each refused arrival, as the web logged it, the gap to the last
 * accepted arrival at that site and which process sent each. A burst-1 bucket refuses any arrival
 * less than an interval after the last accepted one; an arrival on time after one that left late is
 * such an arrival, and so is one whose process reserved its turn on the shared clock before the
 * other process's late departure moved it.
 */
export interface RefusalGaps {
    refused: number;
    /** Gap from the last accepted arrival to the refused one, ms: median and least. */
    gapP50Ms: number;
    gapMinMs: number;
    /** Share of refusals sent by another process than the last accepted arrival's. */
    otherProcessShare: number;
    /** Share whose last accepted arrival itself came late: over an interval and 2 ms after the one before it. */
    afterLateShare: number;
    /** Gaps between consecutive accepted arrivals, ms: 1st and 50th percentile (the interval is the floor). */
    acceptedGapP1Ms: number;
    acceptedGapP50Ms: number;
}

export function refusalGaps(log: readonly LogEntry[], pacedHosts: readonly string[], intervalMs: number): RefusalGaps {
    const gaps: number[] = [];
    const acceptedGaps: number[] = [];
    let other = 0;
    let afterLate = 0;
    for (const host of pacedHosts) {
        let last: LogEntry | undefined;
        let lastGap = Number.POSITIVE_INFINITY;
        for (const entry of log) {
            if (entry.site !== host || isRobotsPath(entry.path)) continue;
            if (!entry.refused) {
                if (last) {
                    lastGap = entry.time - last.time;
                    acceptedGaps.push(lastGap);
                }
                last = entry;
                continue;
            }
            if (!last) continue;
            gaps.push(entry.time - last.time);
            if (entry.client !== last.client) other += 1;
            if (Number.isFinite(lastGap) && lastGap > intervalMs + 2) afterLate += 1;
        }
    }
    const share = (n: number) => (gaps.length ? Math.round((n / gaps.length) * 100) / 100 : 0);
    return {
        refused: gaps.length,
        gapP50Ms: percentile(gaps, 50),
        gapMinMs: gaps.length ? Math.min(...gaps) : 0,
        otherProcessShare: share(other),
        afterLateShare: share(afterLate),
        acceptedGapP1Ms: percentile(acceptedGaps, 1),
        acceptedGapP50Ms: percentile(acceptedGaps, 50),
    };
}
