import { pageLinks } from '@crawlee-throttling/polite-web';

/** What bounds B8's crawl when nothing but the graph, the latency, the slots and the known paces do. */
export interface IdealCrawl {
    sites: number;
    pacedSites: number;
    pacedRate: number;
    /** Pages per site besides its root. */
    pages: number;
    latencyMs: number;
    /** Requests in flight over all processes, and per site (paced sites: `pacedConcurrency`). */
    slots: number;
    siteSlots: number;
    pacedConcurrency: number;
}

interface Pending {
    site: number;
    /** -1 for the root. */
    page: number;
}

/**
 * The makespan (first to last arrival, ms) of a perfect scheduler: every request leaves the moment
 * a slot, its site's slots and its site's pace allow, paced sites first (they are the long pole),
 * links known once their page answered. Stepped per ms, so it is the bound to the millisecond.
 */
export function idealMakespanMs(o: IdealCrawl): number {
    const ready: Pending[] = Array.from({ length: o.sites }, (_, site) => ({ site, page: -1 }));
    const seen = new Set(ready.map((r) => `${r.site}:${r.page}`));
    const inFlight: (Pending & { endsAt: number })[] = [];
    const perSite = new Array<number>(o.sites).fill(0);
    const nextAt = new Array<number>(o.sites).fill(0);
    const intervalMs = 1000 / o.pacedRate;
    const total = o.sites * (o.pages + 1);
    let done = 0;
    let last = 0;
    for (let t = 0; done < total; t += 1) {
        for (let i = inFlight.length - 1; i >= 0; i -= 1) {
            const r = inFlight[i];
            if (r.endsAt > t) continue;
            inFlight.splice(i, 1);
            done += 1;
            perSite[r.site] -= 1;
            const links = r.page < 0 ? (o.pages > 0 ? [0] : []) : pageLinks(r.page, o.pages);
            for (const page of links) {
                const id = `${r.site}:${page}`;
                if (seen.has(id)) continue;
                seen.add(id);
                ready.push({ site: r.site, page });
            }
        }
        ready.sort((a, b) => Number(b.site < o.pacedSites) - Number(a.site < o.pacedSites));
        for (let i = 0; i < ready.length && inFlight.length < o.slots;) {
            const r = ready[i];
            const paced = r.site < o.pacedSites;
            const cap = paced ? o.pacedConcurrency : o.siteSlots;
            if (perSite[r.site] >= cap || (paced && nextAt[r.site] > t)) {
                i += 1;
                continue;
            }
            if (paced) nextAt[r.site] = t + intervalMs;
            perSite[r.site] += 1;
            inFlight.push({ ...r, endsAt: t + o.latencyMs });
            ready.splice(i, 1);
            last = t;
        }
    }
    return last;
}
