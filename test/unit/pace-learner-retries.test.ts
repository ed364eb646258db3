/**
 * What the pace learner takes for a retry: a refusal with no answer since the last one teaches
 * nothing of the rate only when the refused request was the only one sent since. The learner is
 * driven directly on a manual timeline (epoch ms), one step per call.
 */
import { PaceLearner } from '../../packages/throttling/src/pacing/pace-learner';
import { RAMPUP_DEFAULTS } from '../../packages/throttling/src/pacing/rampup-policy';

const POLICY = RAMPUP_DEFAULTS;
const T0 = 1_780_000_000_000;
// Pages take this long; a refusal is answered at once (a token bucket in front of the pages).
const RESPONSE_MS = 270;

/**
 * An unpaced start at two slots: `pairs` of requests sent together and answered, which proves two in
 * flight, then a refusal naming `waitMs`. Returns the learner and when it was refused.
 */
function refusedAfterBurst(pairs: number, waitMs: number): { learner: PaceLearner; at: number } {
    const learner = new PaceLearner();
    learner.extraConcurrency = 1;
    let now = T0;
    for (let i = 0; i < pairs; i++) {
        learner.onDispatch(now, POLICY, 20, 1);
        learner.onDispatch(now, POLICY, 20, 2);
        learner.onAnswer(now + RESPONSE_MS, now);
        learner.onAnswer(now + RESPONSE_MS, now);
        now += RESPONSE_MS + 30;
    }
    learner.onDispatch(now, POLICY, 20, 1);
    learner.onTrigger(now, POLICY, waitMs, true, 1);
    return { learner, at: now };
}

describe('a refusal with no answer since the last one', () => {
    test('is a retry when the refused request was the only one sent since: the pace stays', () => {
        const { learner, at } = refusedAfterBurst(5, 700);
        const paced = learner.rate;
        expect(Number.isFinite(paced)).toBe(true);
        const retryAt = at + 700;
        learner.onDispatch(retryAt, POLICY, 20, 1);
        learner.onTrigger(retryAt, POLICY, 1_000, true, 1);
        expect(learner.rate).toBe(paced);
    });

    test('is the pace refused when another request left since and is still unanswered: the pace is cut', () => {
        // A bucket of 0.87 req/s and burst 9, answering Retry-After as an HTTP-date: read as a retry,
        // each refusal left the pace of the burst (5 req/s) standing, and every second the request
        // sent at the backoff's end was accepted and the next, one interval later, refused before the
        // first was answered: 10 of 30 requests refused (B5 mix 3017).
        const { learner, at } = refusedAfterBurst(5, 700);
        const paced = learner.rate;
        const accepted = at + 700;
        learner.onDispatch(accepted, POLICY, 20, 1);
        const next = accepted + 1000 / paced;
        learner.onDispatch(next, POLICY, 20, 2);
        learner.onTrigger(next, POLICY, 800, true, 2);
        expect(learner.rate).toBeLessThan(paced);
        learner.onAnswer(accepted + RESPONSE_MS, accepted);
    });
});

describe('a retry refused two seconds or more after the refusal before it', () => {
    test('skips the next retry: a limiter that remembers would count it and stay locked', () => {
        const { learner, at } = refusedAfterBurst(5, 700);
        // The first retry comes a second after the refusal, and is refused: no long gap yet.
        const first = at + 1_000;
        learner.onDispatch(first, POLICY, 20, 1);
        expect(learner.skipsRetry(first)).toBe(false);
        learner.onTrigger(first, POLICY, 2_000, false, 1);
        // The second, two seconds after the first: a bucket of 0.5 req/s or more would have taken it.
        const second = first + 2_000;
        learner.onDispatch(second, POLICY, 20, 1);
        expect(learner.skipsRetry(second)).toBe(true);
    });

    test('does not skip after a refusal that is no retry (an answer came since)', () => {
        const { learner, at } = refusedAfterBurst(5, 700);
        const accepted = at + 700;
        learner.onDispatch(accepted, POLICY, 20, 1);
        learner.onAnswer(accepted + RESPONSE_MS, accepted);
        const refused = accepted + 2_500;
        learner.onDispatch(refused, POLICY, 20, 1);
        expect(learner.skipsRetry(refused)).toBe(false);
    });
});
