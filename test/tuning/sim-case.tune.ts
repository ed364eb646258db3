/**
 * Tuning aid (not part of `npm test`): one simulated site given as JSON in SITE, crawled with PAGES
 * pages; prints each pace change and the arrivals.
 * `SITE='{"host":"a.example","rate":4,"burst":3,"latencyMs":50}' PAGES=120 npx jest test/tuning/sim-case.tune.ts --testMatch '**\/*.tune.ts'`
 */
import { simulateCrawl } from '../helpers/rate-limited-sim';
import type { SimSite } from '../helpers/rate-limited-sim';

test('one simulated site', async () => {
    const site = JSON.parse(process.env.SITE ?? '{"host":"a.example","rate":4,"burst":3,"latencyMs":50}') as SimSite;
    const options = JSON.parse(process.env.OPTIONS ?? '{}');
    let t0 = -1;
    let last = '';
    const at = (now: number) => ((now - t0) / 1000).toFixed(2);
    const r = await simulateCrawl([site], Number(process.env.PAGES ?? 120), options, 40, 900_000, (m, now) => {
        if (t0 < 0) t0 = now;
        const d = m.snapshot()[0];
        const p = d?.rampup;
        const line = `rate ${p?.rate?.toFixed(2)} safe ${p?.safeRate?.toFixed(2)} unsafe ${p?.unsafeRate?.toFixed(2)} slots ${d?.concurrencyLimit}`;
        if (line !== last) console.log(at(now), line);
        last = line;
    });
    const list = r.arrivals.get(site.host)!;
    console.log(list.map((a) => `${at(a.at)}${a.refused ? 'R' : ''}`).join(' '));
    console.log(
        `done ${r.done}/${r.pages} ratio ${r.ratio.toFixed(2)} refused ${r.refused} (${(r.refusedShare * 100).toFixed(1)}%) response ${r.responseRatio.get(site.host)?.toFixed(2)}x maxInFlight ${r.maxInFlight}`,
    );
}, 600_000);
