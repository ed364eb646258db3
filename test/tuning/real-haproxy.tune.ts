/**
 * Tuning aid (not part of `npm test`): real haproxy sites of LIMITS requests per 10 s (default
 * 5,7,9,11), PAGES pages each (default 40) answered in LAT ms (default 50), crawled in one run with
 * defaults. Prints each site's refusals, its span (first arrival to last) beside the oracle's
 * ((pages − 1) / (0.95 × rate)), and the arrivals (R: refused).
 * `PAGES=20 NODE_OPTIONS=--experimental-vm-modules npx jest test/tuning/real-haproxy.tune.ts --testMatch '**\/*.tune.ts' --selectProjects e2e`
 */
import { crawlBehindLimiters, describeLimiter, refusals } from '../helpers/real-limiters';

const PAGES = Number(process.env.PAGES ?? 40);
const LIMITS = (process.env.LIMITS ?? '5,7,9,11').split(',').map(Number);

describeLimiter('haproxy', 'real haproxy sites', () => {
    test('crawled with defaults', async () => {
        const sites = LIMITS.map((l) => ({
            host: `h${l}.example`,
            limiter: { kind: 'haproxy', limitPer10s: l, latencyMs: Number(process.env.LAT ?? 50) } as const,
        }));
        const { entries, failed } = await crawlBehindLimiters(sites, PAGES);
        for (const [i, limit] of LIMITS.entries()) {
            const host = sites[i].host;
            const list = entries.filter((e) => e.site === host).sort((a, b) => a.time - b.time);
            const spanS = (list[list.length - 1].time - list[0].time) / 1000;
            const oracleS = (PAGES - 1) / (0.95 * (limit / 10));
            const arrivals = list.map((e) => `${((e.time - list[0].time) / 1000).toFixed(1)}${e.refused ? 'R' : ''}`);
            console.log(
                `${limit} per 10 s, ${PAGES} pages: ${refusals(entries, host).length} refused, ` +
                    `${spanS.toFixed(1)} s against the oracle's ${oracleS.toFixed(1)} s (${(spanS / oracleS).toFixed(2)}×), ` +
                    `${failed.length} failed\n  ${arrivals.join(' ')}`,
            );
        }
    }, 600_000);
});
