import type { LogEntry } from '@crawlee-throttling/polite-web';

/**
 * Accepted page arrivals per second at one site over the second half of its crawl (from halfway
 * between its first and last arrival to the last): the pace the crawl settled at, past any search
 * at the start. Null with fewer than 2 arrivals. robots.txt is left out.
 */
export function steadyPace(entries: readonly LogEntry[], host: string): number | null {
    const pages = entries.filter((e) => e.site === host && e.path !== '/robots.txt');
    if (pages.length < 2) return null;
    const times = pages.map((e) => e.time);
    const first = Math.min(...times);
    const last = Math.max(...times);
    if (last === first) return null;
    const mid = first + (last - first) / 2;
    const accepted = pages.filter((e) => e.time >= mid && e.status >= 200 && e.status < 300 && !e.refused && !e.reset);
    return (accepted.length * 1000) / (last - mid);
}
