/**
 * The figures behind the pace plots, read from a simulated crawl: what the manager enforced per
 * host over time, and what each site accepted.
 */
import type { SiteOptions } from '../../packages/polite-web/src';
import type { ThrottlingRequestManager } from 'crawlee-throttling';

/** A rate (req/s) from epoch ms `at` on. */
export interface RatePoint {
    at: number;
    rate: number;
}

/** A span of epoch ms. */
export interface Span {
    from: number;
    until: number;
}

/**
 * Records, per domain, the pace in force each time it changes, and the spans the backoff clock held
 * the domain (a refusal's wait, or an announced empty quota): a pace line alone would hide those.
 * The snapshot's `intervalMs` is the spacing the manager enforces (the largest of the adaptive pace,
 * crawl delay, floor, backoff pacing and announced limits), so its inverse is the pace; 0 means
 * unpaced (Infinity).
 */
export function paceRecorder(): {
    onStep: (manager: ThrottlingRequestManager, now: number) => void;
    paces: Map<string, RatePoint[]>;
    holds: Map<string, Span[]>;
} {
    const paces = new Map<string, RatePoint[]>();
    const holds = new Map<string, Span[]>();
    const listOf = <T>(map: Map<string, T[]>, key: string): T[] => {
        if (!map.has(key)) map.set(key, []);
        return map.get(key)!;
    };
    const onStep = (manager: ThrottlingRequestManager, now: number) => {
        for (const row of manager.snapshot()) {
            const rate = row.intervalMs > 0 ? 1000 / row.intervalMs : Number.POSITIVE_INFINITY;
            const pace = listOf(paces, row.domain);
            // Only changes: a long crawl takes thousands of steps at a handful of paces.
            if (pace[pace.length - 1]?.rate !== rate) pace.push({ at: now, rate });
            if (!row.backingOff) continue;
            const held = listOf(holds, row.domain);
            const last = held[held.length - 1];
            // The clock's end is exact even between steps; a wait extended while held is one span.
            if (last && now <= last.until) last.until = Math.max(last.until, row.backoffUntil);
            else held.push({ from: now, until: row.backoffUntil });
        }
    };
    return { onStep, paces, holds };
}

/**
 * Answers a site accepted per second, sampled every `stepMs` from its first request to its last:
 * what it actually let through, to set against the pace. Counted over the last `windowMs`, or over
 * the last `minAnswers` answers when those span longer, so a 1 req/s site does not read as a
 * staircase of 0, 0.5 and 1.
 */
export function acceptedPerSecond(
    arrivals: { at: number; refused: boolean }[],
    windowMs = 2000,
    minAnswers = 8,
    stepMs = 250,
): RatePoint[] {
    if (arrivals.length === 0) return [];
    const accepted = arrivals.filter((a) => !a.refused).map((a) => a.at);
    const first = arrivals[0].at;
    const last = arrivals[arrivals.length - 1].at;
    const points: RatePoint[] = [];
    let seen = 0;
    for (let t = first; t <= last; t += stepMs) {
        while (seen < accepted.length && accepted[seen] <= t) seen++;
        let count = accepted.slice(0, seen).filter((at) => at > t - windowMs).length;
        let spanMs = windowMs;
        if (count < minAnswers && seen > count) {
            count = Math.min(minAnswers, seen);
            spanMs = Math.max(windowMs, t - accepted[seen - count]);
        }
        points.push({ at: t, rate: (count * 1000) / spanMs });
    }
    return points;
}

const RETRY_AFTER: Record<string, string> = { seconds: 'Retry-After s', 'http-date': 'Retry-After date', none: 'bare' };

/** "s2: 1.72 req/s, burst 4, 0 ms, bare 429": what the legend says of a site. */
export function siteLabel(site: SiteOptions, index: number): string {
    const refusal = { status: 429, retryAfter: 'seconds', rateLimitHeaders: 'none', ...site.refusal };
    const headers = refusal.rateLimitHeaders === 'none' ? '' : `, ${refusal.rateLimitHeaders} RateLimit headers`;
    return `s${index + 1}: ${site.rate} req/s, burst ${site.burst ?? 1}, ${site.latencyMs ?? 0} ms, ${RETRY_AFTER[refusal.retryAfter]} ${refusal.status}${headers}`;
}
