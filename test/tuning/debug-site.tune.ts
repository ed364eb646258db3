/**
 * Tuning aid (not part of `npm test`): one mix of B5's family in the simulation, with each site's
 * pace changes and arrivals. `SEED=1027 HOSTS=s1,s3 npx jest --testMatch '**\/*.tune.ts' test/tuning/debug-site.tune.ts`.
 */
import { drawMixes } from '../../packages/bench/src/mixes';
import { asRealLimiter, simulateCrawl } from '../helpers/rate-limited-sim';

const seed = Number(process.env.SEED ?? 1000);
const hosts = (process.env.HOSTS ?? '').split(',').filter(Boolean);

test('one mix, site by site', async () => {
    const mix = drawMixes(seed, 1)[0];
    // As the family crawls them: an even seed's sites with RateLimit headers become their fixed windows.
    const all = seed % 2 === 0 ? mix.sites.map(asRealLimiter) : mix.sites;
    const sites = hosts.length ? all.filter((s) => hosts.some((h) => s.host.endsWith(`-${h}.example`))) : all;
    const last = new Map<string, string>();
    let t0 = -1;
    const at = (now: number) => ((now - t0) / 1000).toFixed(2);
    const r = await simulateCrawl(sites, mix.pages, {}, 40, mix.obedientIdealMs * 8 + 60_000, (m, now) => {
        if (t0 < 0) t0 = now;
        for (const d of m.snapshot()) {
            const p = d.rampup;
            const line = `rate ${p?.rate?.toFixed(2)} safe ${p?.safeRate?.toFixed(2)} unsafe ${p?.unsafeRate?.toFixed(2)} slots ${d.concurrencyLimit}`;
            if (last.get(d.domain) === line) continue;
            last.set(d.domain, line);
            console.log(at(now), d.domain, line);
        }
    });
    for (const [host, list] of r.arrivals) {
        const s = sites.find((x) => x.host === host)!;
        const arrivals = list.map((a) => `${at(a.at)}${a.refused ? 'R' : ''}`).join(' ');
        console.log(
            host,
            `${s.rate}/${s.burst}/${s.latencyMs}/${s.refusal?.status}-${s.refusal?.retryAfter}`,
            arrivals,
        );
    }
    console.log(
        `ratio ${(r.makespanMs / mix.obedientIdealMs).toFixed(2)} refused ${(r.refusedShare * 100).toFixed(1)}%`,
    );
}, 600_000);
