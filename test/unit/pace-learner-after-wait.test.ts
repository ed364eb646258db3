/**
 * What a refusal's wait does to the learner's windows, and which pace a refusal is judged at. The
 * learner is driven directly on a manual timeline (epoch ms) against a token bucket written out here:
 * one slot, each request answered after `LATENCY_MS`, a refusal at once with `Retry-After: 1`, and the
 * wait before the next request.
 */
import { PaceLearner } from '../../packages/throttling/src/pacing/pace-learner';
import { MeasuringWindow } from '../../packages/throttling/src/pacing/measuring-window';
import { RAMPUP_DEFAULTS } from '../../packages/throttling/src/pacing/rampup-policy';

const POLICY = RAMPUP_DEFAULTS;
const T0 = 1_780_000_000_000;
const LATENCY_MS = 5;
const WAIT_MS = 1_000;

interface Crawl {
    /** When the pace first reached 4 req/s, ms from the first request. */
    fourAtMs: number;
    refusals: number;
}

/** `pages` requests, one at a time, to a burst-1 bucket of 5 req/s, the learner told nothing. */
function crawl(pages: number): Crawl {
    const learner = new PaceLearner();
    const rate = 5;
    let tokens = 1;
    let filledAt = T0;
    let now = T0;
    let fourAtMs = Number.POSITIVE_INFINITY;
    let refusals = 0;
    for (let done = 0; done < pages;) {
        tokens = Math.min(1, tokens + ((now - filledAt) * rate) / 1000);
        filledAt = now;
        learner.onDispatch(now, POLICY, pages - done, 1);
        if (tokens >= 1) {
            tokens -= 1;
            done += 1;
            learner.onAnswer(now + LATENCY_MS, now);
            now = Math.max(now + LATENCY_MS, now + learner.delayMs());
        } else {
            refusals += 1;
            learner.onTrigger(now, POLICY, WAIT_MS, true, 1);
            now += WAIT_MS + learner.delayMs();
        }
        if (learner.rate >= 4 && Number.isFinite(learner.rate)) fourAtMs = Math.min(fourAtMs, now - T0);
    }
    return { fourAtMs, refusals };
}

describe('after a refusal', () => {
    test('the next window starts when the wait ends, and proves the new pace', () => {
        // Two requests sent together at first contact: the second is refused and the pace is a guess of
        // 1 req/s. A window that began at the refusal held the wait and counted for nothing: 4 req/s came
        // 7.75 s in. Climbing sooner, a probe near the bound is worth its refusal with more pages left:
        // here one more is sent and refused (4 in all, 3 before), and the 80 pages take 25.0 s (24.7).
        const r = crawl(80);
        expect(r.fourAtMs).toBeLessThanOrEqual(6_000);
        expect(r.refusals).toBeLessThanOrEqual(4);
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
