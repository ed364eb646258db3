/**
 * Regenerates the pace plots of docs/rampup.md (not part of `npm test`):
 * `NODE_OPTIONS=--experimental-vm-modules npx jest test/tuning/pace-plots.tune.ts --testMatch '**\/*.tune.ts'`
 * (the path first: `--testMatch` takes every argument after it as one more pattern).
 * Mixes of B5's docs seeds (3000–3019) crawled in the simulation: the manager's own code, defaults,
 * on a ManualClock against token-bucket sites (those sending RateLimit headers as the fixed windows
 * real limiters with headers are), so the plots are exact and the same on every run.
 * `PLOT_SEEDS=3000,3012` picks other mixes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { drawMix } from '../../packages/bench/src/mixes';
import { asRealLimiter, SiteModel, simulateCrawl, START } from '../helpers/rate-limited-sim';
import { pacePlotSvg } from './pace-plot-svg';
import { acceptedPerSecond, paceRecorder, siteLabel } from './pace-series';

// A short mix of three refusal styles, the only long crawl among 3000–3019, and two slow sites
// refusing with a bare 503 (no Retry-After).
const SEEDS = (process.env.PLOT_SEEDS ?? '3000,3012,3009').split(',').map(Number);
const CRAWLER_CONCURRENCY = 40; // B5's crawler: maxConcurrency 40

test.each(SEEDS)(
    'pace plot of mix %i',
    async (seed) => {
        const drawn = drawMix(seed);
        const mix = { ...drawn, sites: drawn.sites.map(asRealLimiter) };
        const recorder = paceRecorder();
        const cap = mix.obedientIdealMs * 8 + 60_000;
        const r = await simulateCrawl(mix.sites, mix.pages, {}, CRAWLER_CONCURRENCY, cap, recorder.onStep);
        const t0 = Math.min(...[...r.arrivals.values()].flat().map((a) => a.at));
        const sec = (at: number) => (at - t0) / 1000;
        const sites = mix.sites.map((site, i) => {
            const pace = recorder.paces.get(site.host);
            const arrivals = r.arrivals.get(site.host)!;
            if (!pace) throw new Error(`no snapshot row for ${site.host}: the plot would miss a site`);
            const end = sec(arrivals[arrivals.length - 1].at);
            return {
                label: siteLabel(site, i),
                trueRate: new SiteModel(site, START).trueRate,
                end,
                // What the pace did after the site's last request no longer paced anything.
                pace: pace.map((p) => ({ at: sec(p.at), rate: p.rate })).filter((p) => p.at >= 0 && p.at <= end),
                accepted: acceptedPerSecond(arrivals).map((p) => ({ at: sec(p.at), rate: p.rate })),
                refusals: arrivals.filter((a) => a.refused).map((a) => sec(a.at)),
                held: (recorder.holds.get(site.host) ?? []).map((h) => ({ from: sec(h.from), until: sec(h.until) })),
            };
        });
        const ratio = r.makespanMs / mix.idealMs;
        const svg = pacePlotSvg({
            title: `B5 mix ${seed} (${mix.kind}, ${mix.sites.length} × ${mix.pages} pages): makespan ${(r.makespanMs / 1000).toFixed(1)} s = ${ratio.toFixed(2)}× ideal, ${(r.refusedShare * 100).toFixed(1)} % refused`,
            note: `Simulated: the manager's own code with default options, on a simulated clock, against simulated limiters (not a real-time run). ${r.done} of ${r.pages} pages done.`,
            seconds: r.makespanMs / 1000,
            sites,
        });
        writeFileSync(join(__dirname, `../../docs/img/pace-mix-${seed}.svg`), svg);
        // What the docs' words about each plot are checked against.
        for (const [i, s] of sites.entries()) {
            const last = s.pace[s.pace.length - 1];
            const firstRefusal = s.refusals[0]?.toFixed(2) ?? '-';
            const held = s.held.map((h) => `${h.from.toFixed(1)}-${h.until.toFixed(1)}`).join(' ');
            console.log(
                `${seed} ${s.label} | first refusal ${firstRefusal}s, ${s.refusals.length} refused of ${r.arrivals.get(mix.sites[i].host)!.length} | final pace ${last.rate.toFixed(2)} | held ${held} | paces ${s.pace.map((p) => `${p.at.toFixed(1)}:${p.rate.toFixed(2)}`).join(' ')}`,
            );
        }
        console.log(
            `${seed} ratio ${ratio.toFixed(2)} (obedient ${(r.makespanMs / mix.obedientIdealMs).toFixed(2)}) refused ${(r.refusedShare * 100).toFixed(1)}% makespan ${(r.makespanMs / 1000).toFixed(1)}s`,
        );
        expect(r.done).toBe(r.pages);
    },
    600_000,
);
