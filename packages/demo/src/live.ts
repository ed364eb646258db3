import type { DomainSnapshot } from 'crawlee-throttling';

import type { LiveView } from './crawl';
import { clockTime, seconds, textTable } from './format';

/** What one domain is doing right now, in words. */
export function domainState(s: DomainSnapshot, now: number): string {
    if (s.backingOff) return `backing off until ${clockTime(s.backoffUntil)}`;
    if (s.queued === 0 && s.inFlight === 0) return s.handled > 0 ? 'idle' : 'discovered';
    if (!s.ready && !Number.isFinite(s.readyAt)) return 'waiting for a request in flight';
    if (!s.ready && s.readyAt > now) {
        if (s.intervalMs <= 0) return `waiting ${s.readyAt - now} ms`;
        // Newer versions say why the interval is what it is; robots.txt is the plain case.
        const reason = (s as { intervalReason?: string }).intervalReason;
        const why = reason && reason !== 'crawl-delay' && reason !== 'none' ? ` (${reason})` : '';
        return `crawl delay ${(s.intervalMs / 1000).toFixed(1)} s${why}`;
    }
    return 'ready';
}

/** The lines of the live table for one progress tick. */
export function formatLive(view: LiveView, hosts: readonly string[], now = Date.now()): string[] {
    const what = view.title ?? (view.kind === 'throttled' ? 'with the throttler' : 'without the throttler (baseline)');
    const title = `${what}, t = ${seconds(view.elapsedMs)}`;
    if (view.snapshot) {
        const byDomain = new Map(view.snapshot.map((s) => [s.domain, s]));
        const rows = hosts.map((host) => {
            const s = byDomain.get(host);
            if (!s) return [host, '0', '0', '0', String(view.refused.get(host) ?? 0), 'not discovered yet'];
            return [
                host,
                String(s.handled),
                String(s.queued),
                String(s.inFlight),
                String(view.refused.get(host) ?? 0),
                domainState(s, now),
            ];
        });
        return [title, ...textTable(['domain', 'done', 'queued', 'in flight', 'refused', 'state'], rows, [0, 5])];
    }
    const byProcess = view.byProcess;
    const rows = hosts.map((host) => [
        host,
        String(view.served.get(host) ?? 0),
        String(view.refused.get(host) ?? 0),
        String(view.requests.get(host) ?? 0),
        ...(byProcess ? [processCounts(byProcess.get(host), view.processes)] : []),
    ]);
    const header = ['domain', 'served', 'refused', 'requests', ...(byProcess ? ['by process'] : [])];
    return [title, ...textTable(header, rows, [0, 4])];
}

/**
 * Requests per crawler process, e.g. `p1 5 · p2 0 · p3 7`. With `processes`, every process from
 * 1 to that number is listed, so one that crawled nothing shows 0 rather than vanishing.
 */
export function processCounts(counts: ReadonlyMap<string, number> | undefined, processes = 0): string {
    const all = new Map(counts ?? []);
    for (let p = 1; p <= processes; p++) if (!all.has(String(p))) all.set(String(p), 0);
    if (all.size === 0) return '';
    return [...all]
        .sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }))
        .map(([label, n]) => `p${label} ${n}`)
        .join(' · ');
}

/**
 * Prints a block of lines once a second: on a terminal the block is redrawn in place, otherwise
 * each tick is appended.
 */
export class LivePrinter {
    private drawn = 0;

    constructor(private readonly out: NodeJS.WriteStream | { write(text: string): unknown; isTTY?: boolean }) {}

    show(lines: string[]): void {
        if (this.out.isTTY && this.drawn > 0) this.out.write(`\x1b[${this.drawn}A\x1b[0J`);
        this.out.write(`${lines.join('\n')}\n${this.out.isTTY ? '' : '\n'}`);
        this.drawn = lines.length;
    }

    /** Keeps the last block on screen and starts a fresh one below it. */
    done(): void {
        this.drawn = 0;
        if (this.out.isTTY) this.out.write('\n');
    }
}
