/**
 * What a refusal's wait does to the learner's windows, and which pace a refusal is judged at. The
 * learner is driven directly on a manual timeline (epoch ms), against a burst-1 token bucket
 * (test/helpers/burst-one-crawl.ts; answers after `LATENCY_MS`) or by hand.
 */
import { PaceLearner } from '../../packages/throttling/src/pacing/pace-learner';
import { MeasuringWindow } from '../../packages/throttling/src/pacing/measuring-window';
import { RAMPUP_DEFAULTS } from '../../packages/throttling/src/pacing/rampup-policy';
import { BUCKET_T0 as T0, crawlBurstOne } from '../helpers/burst-one-crawl';
import type { Sent } from '../helpers/burst-one-crawl';

const POLICY = RAMPUP_DEFAULTS;
const LATENCY_MS = 5;
const WAIT_MS = 1_000;

/** From the first request to the first sent at 4 req/s or more, ms. */
function fourAtMs(sent: Sent[]): number {
    const fast = sent.find((s) => Number.isFinite(s.pace) && s.pace >= 4);
    return fast ? fast.at - sent[0].at : Number.POSITIVE_INFINITY;
}

describe('after a refusal', () => {
    test('the next window starts when the wait ends, and proves the new pace', () => {
        // Two requests sent together at first contact: the second is refused and the pace is a guess of
        // 1 req/s. A window that began at the refusal held the wait and counted for nothing: 4 req/s came
        // 6.5 s in (4.3 s now), with 3 refusals. Climbing sooner, a probe near the bound is worth its
        // refusal with more pages left: with the wait followed by an interval, one more was refused.
        const sent = crawlBurstOne(80, { rate: 5, latencyMs: LATENCY_MS, waitMs: WAIT_MS });
        expect(fourAtMs(sent)).toBeLessThanOrEqual(6_000);
        expect(sent.filter((s) => s.refused).length).toBeLessThanOrEqual(4);
    });

    test('answers that come during the wait are to requests sent before it, not the next window’s', () => {
        const window = new MeasuringWindow();
        window.begin(T0 + WAIT_MS);
        // Another process's tally: answers to requests sent before the refusal, told during its wait.
        window.count(T0 + 300, 0, 6);
        expect(window.answers).toBe(0);
        window.count(T0 + WAIT_MS + 200, 1, 1);
        expect([window.dispatches, window.answers]).toEqual([1, 1]);
    });

    test('a refusal of the request whose dispatch closed a quiet window is judged at the pace it went out at', () => {
        const learner = new PaceLearner(2);
        let now = T0;
        // Quiet at 2 req/s while the pace doubles: the dispatch that closes the window raises it to 4.
        for (;;) {
            const before = learner.rate;
            learner.onDispatch(now, POLICY, 100, 1);
            if (learner.rate > before) break;
            learner.onAnswer(now + LATENCY_MS, now);
            now += learner.delayMs();
        }
        expect(learner.rate).toBe(4);
        // That request, spaced at 2 req/s, is refused before any other goes out at 4: the site refused
        // 2 req/s (the refused bound), not 4. Judged at 4, the bound was 4 and doubling went on towards it.
        learner.onTrigger(now, POLICY, WAIT_MS, true, 1);
        expect(learner.unsafeRate).toBe(2);
        expect(learner.rate).toBeLessThan(2);
    });
});

describe('after an announced empty quota', () => {
    test('the next window starts at the reset, and proves the pace learned from the quota', () => {
        // Five requests sent together; the fifth answer announces 0 left and a reset in 2 s. The crawl is
        // held until the reset and the pace is what got through over it (about 2.4 req/s). A window that
        // began at the announcement held those 2 s, was judged not full at the third request after the
        // reset, and the pace rose only a window after that.
        const learner = new PaceLearner();
        for (let i = 0; i < 5; i++) learner.onDispatch(T0 + i * 10, POLICY, 100, 1);
        for (let i = 0; i < 5; i++) learner.onAnswer(T0 + 45 + i, T0 + i * 10);
        const announcedAt = T0 + 50;
        learner.onExhausted(announcedAt, POLICY, 2_000);
        const learned = learner.rate;
        expect(learned).toBeGreaterThan(2);
        expect(learned).toBeLessThan(3);
        const reset = announcedAt + 2_000;
        let raisedAt = Number.POSITIVE_INFINITY;
        for (let now = reset; now < reset + 10_000 && !(raisedAt < now); now += learner.delayMs()) {
            learner.onDispatch(now, POLICY, 100, 1);
            learner.onAnswer(now + LATENCY_MS, now);
            if (learner.rate > learned) raisedAt = now;
        }
        // A window (1 s) and the interval of the dispatch that closes it.
        expect(raisedAt - reset).toBeLessThanOrEqual(POLICY.windowMs + 1_000 / learned);
    });
});
