/**
 * A refused bound that one refusal set while the pace still doubled is unconfirmed: requests that
 * reached the site bunched (another process's just before, a send that lagged) are refused at any pace.
 * Reached later without a refusal, it was not the site's, and doubling resumes; a real one is met
 * again while probing, and that refusal confirms it. The learner is driven on a manual timeline
 * against a token bucket written out here (one slot, answers after `LATENCY_MS`, a refusal at once
 * with `Retry-After: 1`).
 */
import { PaceLearner } from '../../packages/throttling/src/pacing/pace-learner';
import { RAMPUP_DEFAULTS } from '../../packages/throttling/src/pacing/rampup-policy';

const POLICY = RAMPUP_DEFAULTS;
const T0 = 1_780_000_000_000;
const LATENCY_MS = 30;
const WAIT_MS = 1_000;

interface Run {
    /** The pace the refusal was forced at. */
    forcedAt: number;
    /** Pace after each request, with its time since the forced refusal (ms). */
    paces: { sinceMs: number; rate: number }[];
    /** Refusals the bucket gave, the forced one left out. */
    refusals: number;
}

/**
 * `requests` requests to a burst-1 bucket of 5 req/s. The first request sent at a paced rate of
 * `forceAbove` or more while the pace still doubles is refused whatever the bucket holds (it arrived
 * bunched), and from then on the bucket refills at `rateAfter(forcedAt)` req/s.
 */
function crawl(requests: number, forceAbove: number, rateAfter: (forcedAt: number) => number): Run {
    const learner = new PaceLearner();
    let rate = 5;
    let tokens = 1;
    let filledAt = T0;
    let now = T0;
    let forcedAtMs = -1;
    let forcedAt = Number.NaN;
    let refusals = 0;
    const paces: Run['paces'] = [];
    for (let i = 0; i < requests; i++) {
        tokens = Math.min(1, tokens + ((now - filledAt) * rate) / 1000);
        filledAt = now;
        // The pace this request was spaced at: a window its dispatch closes raises the pace for the next.
        const sentAt = learner.rate;
        const doubling = Number.isFinite(sentAt) && !Number.isFinite(learner.unsafeRate);
        learner.onDispatch(now, POLICY, 1_000, 1);
        const force = forcedAtMs < 0 && doubling && sentAt >= forceAbove;
        if (force) {
            forcedAtMs = now;
            forcedAt = sentAt;
            rate = rateAfter(forcedAt);
            tokens = 0;
        }
        if (!force && tokens >= 1) {
            tokens -= 1;
            learner.onAnswer(now + LATENCY_MS, now);
            now = Math.max(now + LATENCY_MS, now + learner.delayMs());
        } else {
            if (!force) refusals += 1;
            learner.onTrigger(now, POLICY, WAIT_MS, true, 1);
            now += WAIT_MS + learner.delayMs();
        }
        if (forcedAtMs >= 0) paces.push({ sinceMs: now - forcedAtMs, rate: learner.rate });
    }
    return { forcedAt, paces, refusals };
}

describe('a bound one refusal set while the pace doubled', () => {
    test('reached without a refusal, is not the site’s: the pace goes past it and finds the site', () => {
        // A 5 req/s site; one bunched arrival refused while the pace doubled from 1 to 2 req/s. The pace
        // goes back to the last quiet one (0.95) and probes up to 1.9 in about 20 s.
        const run = crawl(240, 1.5, () => 5);
        expect(run.forcedAt).toBe(2);
        // Held under the bound, the pace would stay at 1.9 until it is relaxed (30 s and 200 requests,
        // about 100 s at that pace).
        const within30s = run.paces.filter((p) => p.sinceMs <= 30_000).map((p) => p.rate);
        expect(Math.max(...within30s)).toBeGreaterThan(run.forcedAt * 1.5);
        // It settles near the site's rate, with few refusals to find it.
        const late = run.paces.filter((p) => p.sinceMs >= 40_000).map((p) => p.rate);
        expect(Math.min(...late)).toBeGreaterThan(3.5);
        expect(Math.max(...late)).toBeLessThanOrEqual(5.5);
        expect(run.refusals).toBeLessThanOrEqual(4);
    });

    test('that was the site’s is refused again while probing, and then holds', () => {
        // The site's rate is just under the pace refused (1.94 req/s): the pace reaches the bound's 95 %
        // quietly and doubles; 3.8 is refused, the probe from that cut is refused at 2.3 and at 1.97:
        // confirmed, the bound holds (one more refusal comes when it is relaxed, after 100 s). Three
        // refusals are what the undo costs on such a site, 1 % of 300 requests.
        const run = crawl(300, 1.5, (forcedAt) => forcedAt * 0.97);
        const siteRate = run.forcedAt * 0.97;
        expect(run.refusals).toBeLessThanOrEqual(5);
        const late = run.paces.filter((p) => p.sinceMs >= 40_000).map((p) => p.rate);
        expect(Math.max(...late)).toBeLessThanOrEqual(siteRate * 1.05);
        expect(Math.min(...late)).toBeGreaterThan(siteRate * 0.9);
    });
});
