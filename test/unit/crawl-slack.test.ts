/**
 * Slack before the crawl's horizon: a scope whose pace is a guess spreads its last few requests over
 * the time the crawl still has, instead of sending them at a guess that may be refused. The horizon
 * is each scope's estimated finish, the latest of them; times are epoch ms on a manual timeline.
 */
import { finishEstimateAt, slackSpacingMs } from '../../packages/throttling/src/pacing/crawl-slack';
import { DomainState } from '../../packages/throttling/src/pacing/domain-state';
import { resolvePolicy } from '../../packages/throttling/src/pacing/policy';
import { CrawlHorizon } from '../../packages/throttling/src/dispatch/crawl-horizon';
import { PaceLearner } from '../../packages/throttling/src/pacing/pace-learner';
import { RAMPUP_DEFAULTS } from '../../packages/throttling/src/pacing/rampup-policy';
import { HORIZON_SHARE, MIN_BACKLOG_TO_PROBE } from '../../packages/throttling/src/pacing/pace-learner-constants';
import { simulateCrawl, simulateOracle } from '../helpers/rate-limited-sim';
import type { SimSite } from '../helpers/rate-limited-sim';

const T0 = 1_780_000_000_000;
const POLICY = RAMPUP_DEFAULTS;

describe('slackSpacingMs', () => {
    test('a guessed pace with few requests left spreads them over a share of the time to the horizon', () => {
        // 10 left, 20 s to the horizon: 10 requests over 16 s.
        expect(slackSpacingMs(T0 + 20_000, T0, 10, true)).toBeCloseTo((20_000 * HORIZON_SHARE) / 10, 6);
    });

    test('none for a pace a quiet window proved, for a backlog worth probing, or with no horizon ahead', () => {
        expect(slackSpacingMs(T0 + 20_000, T0, 10, false)).toBe(0);
        expect(slackSpacingMs(T0 + 20_000, T0, MIN_BACKLOG_TO_PROBE, true)).toBe(0);
        expect(slackSpacingMs(T0 + 20_000, T0, MIN_BACKLOG_TO_PROBE - 1, true)).toBeGreaterThan(0);
        expect(slackSpacingMs(T0, T0, 10, true)).toBe(0);
        expect(slackSpacingMs(0, T0, 10, true)).toBe(0);
        expect(slackSpacingMs(T0 + 20_000, T0, 0, true)).toBe(0);
    });
});

describe('CrawlHorizon', () => {
    test('the latest estimate counts at once; one that comes in counts at the next recompute', () => {
        const horizon = new CrawlHorizon(1_000);
        expect(horizon.at(T0)).toBe(0);
        horizon.note('a.example', T0 + 10_000, T0);
        horizon.note('b.example', T0 + 30_000, T0);
        expect(horizon.at(T0)).toBe(T0 + 30_000);
        // b's estimate comes in: within the refresh the old one stands, after it the new latest.
        horizon.note('b.example', T0 + 5_000, T0 + 100);
        expect(horizon.at(T0 + 200)).toBe(T0 + 30_000);
        expect(horizon.at(T0 + 1_200)).toBe(T0 + 10_000);
    });

    test('a scope with nothing left, or an estimate past, no longer holds it out', () => {
        const horizon = new CrawlHorizon(1_000);
        horizon.note('a.example', T0 + 10_000, T0);
        horizon.note('b.example', T0 + 3_000, T0);
        horizon.note('a.example', T0 + 1_000, T0 + 1_000);
        expect(horizon.at(T0 + 1_000)).toBe(T0 + 3_000);
        expect(horizon.at(T0 + 4_000)).toBe(0);
    });
});

describe('finishEstimateAt', () => {
    // A scope's settings as a user gets them: rampup on.
    const ramping = resolvePolicy({}, {});
    const pacedAt = (rate: number) => {
        const s = new DomainState('a.com');
        const learner = s.ramp(ramping.rampup!);
        learner.rate = rate;
        learner.safeRate = rate;
        return s;
    };

    test('the requests after this one an interval of the pace apart, from the end of any backoff', () => {
        const s = pacedAt(2);
        expect(finishEstimateAt(s, ramping, 11, T0, 0)).toBe(T0 + 10 * 500);
        // Nothing left after this one, or unpaced and never answered: nothing known past now.
        expect(finishEstimateAt(s, ramping, 1, T0, 0)).toBe(T0);
        expect(finishEstimateAt(new DomainState('b.com'), ramping, 11, T0, 0)).toBe(T0);
        s.recordRateLimit(T0, 3_000, ramping);
        expect(s.backoffUntil).toBeGreaterThanOrEqual(T0 + 3_000);
        expect(finishEstimateAt(s, ramping, 11, T0, 0)).toBe(s.backoffUntil + 10 * (1000 / s.rampupState!.rate));
    });

    test('leaves the slack out: a scope spaced by the horizon does not push the horizon out', () => {
        const s = pacedAt(2);
        const armed = s.dispatch(T0, 0, ramping, () => 0.5, false, 5, 8_000);
        // The dispatch was spaced 8 s by the horizon; the scope still needs only its pace's 500 ms a request.
        expect(armed.armedNextDispatchAt - T0).toBe(8_000);
        expect(finishEstimateAt(s, ramping, 5, T0, 0)).toBe(T0 + 4 * 500);
    });
});

describe('PaceLearner.paceIsGuess', () => {
    test('set by a refusal that moves the pace, cleared for good by a quiet window held by the pace', () => {
        const learner = new PaceLearner();
        let now = T0;
        // Unpaced and never refused: no guess.
        for (let i = 0; i < 5; i++, now += 50) {
            learner.onDispatch(now, POLICY, 100, 1);
            learner.onAnswer(now + 20, now);
        }
        expect(learner.paceIsGuess).toBe(false);
        learner.onDispatch(now, POLICY, 100, 1);
        learner.onTrigger(now, POLICY, 1_000, true, 1);
        expect(Number.isFinite(learner.rate)).toBe(true);
        expect(learner.paceIsGuess).toBe(true);
        // Requests at the pace, all accepted, until a window held by the pace closes.
        now += 1_000;
        const end = now + 3 * POLICY.windowMs;
        while (now < end && learner.paceIsGuess) {
            learner.onDispatch(now, POLICY, 100, 1);
            learner.onAnswer(now + 20, now);
            now += learner.delayMs();
        }
        expect(learner.paceIsGuess).toBe(false);
        // Settled: a later refusal moves the pace, and the learner knows the site's rate by then.
        learner.onDispatch(now, POLICY, 100, 1);
        learner.onTrigger(now, POLICY, 1_000, true, 1);
        expect(learner.paceIsGuess).toBe(false);
    });
});

describe('slack in a crawl (the real manager, simulated sites)', () => {
    // A bucket whose burst ran out at a pair in flight: both refused, and the pace read over the burst
    // is a guess above its rate. Alone, it is sent at that guess and refused a third time
    // (pace-learner-limiters.test.ts). Beside a slow site that holds the crawl for 30 s, its last
    // requests are spread over the time the crawl has anyway.
    const bucket: SimSite = {
        host: 'bucket.example',
        rate: 1.37,
        burst: 8,
        latencyMs: 207,
        refusal: { status: 503, retryAfter: 'http-date' },
    };
    const slow: SimSite = {
        host: 'slow.example',
        latencyMs: 0,
        limiter: { kind: 'workers', workers: 1, serviceMs: 1_500 },
    };

    test('a guessed pace beside a slower site: no refusal after the pair, the crawl no longer', async () => {
        const r = await simulateCrawl([bucket, slow], 20, {}, 40, 900_000);
        const oracle = await simulateOracle([bucket, slow], 20, 40, 900_000);
        expect(r.done).toBe(40);
        const arrivals = r.arrivals.get(bucket.host)!;
        expect(arrivals.filter((a) => a.refused).length).toBeLessThanOrEqual(2);
        expect(r.makespanMs).toBeLessThanOrEqual(1.3 * oracle.makespanMs);
        // It finishes before the slow site does: the slack spread its requests, not past the horizon.
        const lastOf = (host: string) => r.arrivals.get(host)!.at(-1)!.at;
        expect(lastOf(bucket.host)).toBeLessThan(lastOf(slow.host));
    });
    test('a horizon renewed when a quota is announced: a window that holds the crawl counts before it sends again', async () => {
        // The window announces its quota spent within a second and sends nothing until it turns; the
        // bucket's pair comes 4 s in. Estimated only at dispatches, the window was still unpaced then,
        // the horizon a moment away, and the bucket's guess was refused a third time.
        const sites: SimSite[] = [
            {
                host: 'bucket.example',
                rate: 0.87,
                burst: 9,
                latencyMs: 300,
                refusal: { status: 429, retryAfter: 'http-date' },
            },
            {
                host: 'window.example',
                latencyMs: 20,
                limiter: { kind: 'window', limit: 5, windowMs: 5_000, headers: 'draft-8' },
            },
        ];
        const r = await simulateCrawl(sites, 20, {}, 40, 900_000);
        const oracle = await simulateOracle(sites, 20, 40, 900_000);
        expect(r.done).toBe(40);
        expect(r.arrivals.get('bucket.example')!.filter((a) => a.refused).length).toBeLessThanOrEqual(2);
        expect(r.makespanMs).toBeLessThanOrEqual(1.3 * oracle.makespanMs);
    });
});
