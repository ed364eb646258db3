/**
 * Study runner (not part of `npm test`): 20-page crawls of servers with W workers at 188 ms a page,
 * with defaults and by the oracle (told W), against the least a learner told nothing can take when it
 * starts at one request and at most doubles them each round trip (docs/rampup-bounds.md, "What no learner
 * told nothing can meet"):
 * `NODE_OPTIONS=--experimental-vm-modules npx jest test/tuning/doubling-bound.tune.ts --testMatch '**\/*.tune.ts' --selectProjects unit`.
 */
import { simulateCrawl, simulateOracle } from '../helpers/rate-limited-sim';
import type { SimSite } from '../helpers/rate-limited-sim';

const PAGES = 20;
const SERVICE_MS = 188;

/** Rounds until the last request goes out: W from the start, or doubling from one up to W. */
function lastDepartureRound(workers: number, doubling: boolean): number {
    let sent = 0;
    let slots = doubling ? 1 : workers;
    for (let round = 0; ; round++) {
        sent += slots;
        if (sent >= PAGES) return round;
        slots = Math.min(workers, slots * 2);
    }
}

test('doubling bound', async () => {
    for (const workers of [1, 2, 4, 7]) {
        const site: SimSite = {
            host: `w${workers}.example`,
            latencyMs: 2,
            limiter: { kind: 'workers', workers, serviceMs: SERVICE_MS },
        };
        const r = await simulateCrawl([site], PAGES, {}, 40, 600_000);
        const o = await simulateOracle([site], PAGES, 40, 600_000);
        // Makespans are first to last departure: the oracle's last request leaves after its rounds.
        const bound = lastDepartureRound(workers, true) / Math.max(1, lastDepartureRound(workers, false));
        console.log(
            `${workers} workers: defaults ${(r.makespanMs / o.makespanMs).toFixed(2)}x the oracle (most in flight ${r.hostInFlight.get(site.host)}), doubling bound ${bound.toFixed(2)}x`,
        );
    }
}, 600_000);
