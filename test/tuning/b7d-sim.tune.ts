/**
 * Tuning aid (not part of `npm test`): B7 (d) in the simulation. 80 pages of one 5 req/s burst-1 site
 * dealt to 1, 2 and 4 processes sharing a FileDomainClock, told no rate; prints each run's steady pace
 * (accepted arrivals per second over the second half of the crawl) over the site's rate.
 * `NODE_OPTIONS=--experimental-vm-modules npx jest test/tuning/b7d-sim.tune.ts --testMatch '**\/*.tune.ts' --selectProjects unit`
 * `SITE='{"rate":5,"burst":1,"latencyMs":20}' PAGES=80 PRINT=1` change the site, the pages, or print arrivals.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileDomainClock } from 'crawlee-throttling';
import { SIM_START, simulateSharedCrawl } from '../helpers/shared-rate-sim';

test('B7 (d) in the simulation', async () => {
    const site = JSON.parse(process.env.SITE ?? '{"rate":5,"burst":1,"latencyMs":20}');
    const pages = Number(process.env.PAGES ?? 80);
    for (const processes of (process.env.PROCESSES ?? '1,2,4').split(',').map(Number)) {
        const shown: string[] = [];
        const dir = mkdtempSync(join(tmpdir(), 'b7d-sim-'));
        const r = await simulateSharedCrawl({
            processes,
            pagesEach: Math.ceil(pages / processes),
            site,
            sharedFor: (clock) => new FileDomainClock(dir, { clock }),
            onStep: (managers, now) => {
                if (!process.env.TRACE) return;
                managers.forEach((m, i) => {
                    const d = m.snapshot()[0];
                    const p = d?.rampup;
                    const line = `rate ${p?.rate?.toFixed(2)} safe ${p?.safeRate?.toFixed(2)} unsafe ${p?.unsafeRate?.toFixed(2)} slots ${d?.concurrencyLimit}`;
                    if (line !== shown[i]) console.log(`${((now - SIM_START) / 1000).toFixed(2)} p${i} ${line}`);
                    shown[i] = line;
                });
            },
        });
        rmSync(dir, { recursive: true, force: true });
        const times = r.arrivals.map((a) => a.at);
        const [first, last] = [Math.min(...times), Math.max(...times)];
        const mid = first + (last - first) / 2;
        const accepted = r.arrivals.filter((a) => a.at >= mid && !a.refused).length;
        const steady = (accepted * 1000) / (last - mid) / site.rate;
        const refused = r.arrivals.filter((a) => a.refused).length;
        if (process.env.PRINT)
            console.log(
                r.arrivals
                    .map((a) => `${((a.at - SIM_START) / 1000).toFixed(2)}${a.process}${a.refused ? 'R' : ''}`)
                    .join(' '),
            );
        console.log(
            `processes ${processes}: steady ${(steady * 100).toFixed(0)} %, makespan ${((last - first) / 1000).toFixed(1)} s, refused ${refused}, handled ${r.handled.join('/')}`,
        );
    }
}, 600_000);
