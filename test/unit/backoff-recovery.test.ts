/**
 * Recovery of the pacing raised by backoff (`rampup: false`): a site that refused once by bad luck is
 * soon crawled at its configured pace again, and a site that keeps refusing still has its pace raised
 * further and still ends the crawl as stalled. Driven through the simulation on a manual clock.
 */
import { PersistentRateLimitError, RequestThrottledError } from 'crawlee-throttling';
import { simulateCrawl, simulateOracle } from '../helpers/rate-limited-sim';
import type { SimSite } from '../helpers/rate-limited-sim';

const host = 'site.example';

describe('backoff recovery without rampup', () => {
    test('a burst-1 site paced just under its rate, refused twice by late arrivals, is back at its pace within 1.3x', async () => {
        // 4 req/s, burst 1: paced at 1 / (0.95 x 4) = 263 ms, a request reaching the site 20 ms late takes
        // the token late, and the next one, on time, is refused with `Retry-After: 1`.
        const site: SimSite = {
            host,
            rate: 4,
            burst: 1,
            latencyMs: 50,
            refusal: { status: 429, retryAfter: 'seconds' },
            lateArrivals: { requests: [12, 40], byMs: 20 },
        };
        const pages = 60;
        const r = await simulateOracle([site], pages);
        const refused = r.arrivals.get(host)!.filter((a) => a.refused).length;
        expect(r.done).toBe(pages);
        expect(refused).toBeGreaterThanOrEqual(1);
        expect(refused).toBeLessThanOrEqual(2);
        const firstRetryAfterMs = 1000;
        expect(r.makespanMs).toBeLessThanOrEqual(1.3 * ((pages / site.rate!) * 1000 + firstRetryAfterMs));
    });

    test('a site refusing every request still gets growing waits and raised pacing, and ends as stalled', async () => {
        // One token, then one every 1000 s: after the first page the site refuses everything, bare 429s.
        const site: SimSite = { host, rate: 0.001, burst: 1, refusal: { status: 429, retryAfter: 'none' } };
        const options = { rampup: false as const, maxDomainStallSecs: 200 };
        let highestPenaltyMs = 0;
        const r = await simulateCrawl([site], 5, options, 40, 300_000, (manager) => {
            highestPenaltyMs = Math.max(highestPenaltyMs, manager.snapshot()[0]?.penaltyMs ?? 0);
        });
        const refusals = r.arrivals.get(host)!.filter((a) => a.refused);
        // 2, 4, 8, 16, 32 s, then the 60 s cap (maxDelaySecs).
        const gaps = refusals.slice(1, 7).map((a, i) => a.at - refusals[i].at);
        expect(gaps).toHaveLength(6);
        for (let i = 1; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThan(gaps[i - 1] * 1.5);
        // The raised pacing doubles at each refusal, as the waits do, up to the cap.
        expect(highestPenaltyMs).toBe(60_000);
        // The simulation stops as the next request is due: refused too, it leaves 300 s of refusing.
        const request = (await r.manager.fetchNextRequest())!;
        const refused = await r.manager.handleResponse({ request }, { statusCode: 429, headers: {} }).catch((e) => e);
        expect(refused).toBeInstanceOf(RequestThrottledError);
        await r.manager.reclaimRequest(request);
        await expect(r.manager.isFinished()).rejects.toBeInstanceOf(PersistentRateLimitError);
    });

    test('without a delaySecs, the raised pacing waits out the whole window: a site told nothing is not met at full speed again', async () => {
        // B1's sites: 5 req/s, burst 2, bare 429s. With no configured pace to return to, stepping down
        // after a few raised intervals sent the crawl back at full speed and had 20 % refused.
        const sites: SimSite[] = [0, 1, 2, 3].map((i) => ({
            host: `s${i}.example`,
            rate: 5,
            burst: 2,
            latencyMs: 50,
            refusal: { status: 429, retryAfter: 'none' },
        }));
        const r = await simulateCrawl(sites, 60, { rampup: false }, 40, 600_000);
        const arrivals = [...r.arrivals.values()].flat();
        expect(r.done).toBe(240);
        expect(arrivals.filter((a) => a.refused).length / arrivals.length).toBeLessThanOrEqual(0.05);
    });
});
