/**
 * How the pace learner reads a refusal that came with several requests in flight: a concurrency cap
 * (nginx `limit_conn`) refuses beyond N, a token bucket refuses when its tokens ran out. The learner
 * is driven directly on a manual timeline (epoch ms), one step per call.
 */
import { PaceLearner } from '../../packages/throttling/src/pacing/pace-learner';
import { RAMPUP_DEFAULTS } from '../../packages/throttling/src/pacing/rampup-policy';

const POLICY = RAMPUP_DEFAULTS;
const RESPONSE_MS = 50;
const T0 = 1_780_000_000_000;

/**
 * One measuring window from `start`: `batches` of requests sent together (each batch's size is how
 * many are in flight at once), each answered after RESPONSE_MS, the batches 400 ms apart; the window
 * closes at the next dispatch after a second. Returns when that closing dispatch was answered.
 */
function windowOf(learner: PaceLearner, start: number, batches: number[], slotBound = false): number {
    let now = start;
    for (const size of batches) {
        for (let i = 1; i <= size; i++) learner.onDispatch(now, POLICY, 100, i);
        for (let i = 0; i < size; i++) learner.onAnswer(now + RESPONSE_MS, now);
        if (slotBound) learner.slotBoundInWindow = true;
        now += 400;
    }
    const closeAt = Math.max(now, start + 1_000);
    learner.onDispatch(closeAt, POLICY, 100, 1);
    learner.onAnswer(closeAt + RESPONSE_MS, closeAt);
    return closeAt + RESPONSE_MS;
}

describe('a refusal with several requests in flight', () => {
    test('with no more in flight than a quiet window had, it is no concurrency cap: the slots stay', () => {
        const learner = new PaceLearner();
        learner.extraConcurrency = 3;
        // Three at once, answered without a queue or a refusal: three in flight are proved.
        const now = windowOf(learner, T0, [3, 3, 3]);
        learner.onTrigger(now + 10, POLICY, 1_000, true, 3);
        expect(learner.extraConcurrency).toBe(3);
        // It taught the pace instead (the unpaced start's first refusal).
        expect(Number.isFinite(learner.rate)).toBe(true);
    });

    test('beyond what a quiet window had, at a pace a quiet window proved: the slots step back, the pace stays', () => {
        const learner = new PaceLearner(5);
        learner.safeRate = 5;
        learner.extraConcurrency = 3;
        // Two at once: fewer than the pace allows, so the window proves two slots and does not raise
        // the pace.
        const now = windowOf(learner, T0, [2]);
        expect(learner.rate).toBe(5);
        learner.onTrigger(now + 10, POLICY, 1_000, true, 4);
        expect(learner.rate).toBe(5);
        expect(learner.extraConcurrency).toBe(2);
    });

    test('at the unpaced start, the knee it sets is tried again one slot above once the pace spaces requests', () => {
        const learner = new PaceLearner();
        learner.extraConcurrency = 1;
        // One in flight proved, then two sent together refused: a cap of one, or a burst-1 bucket.
        let now = windowOf(learner, T0, [1, 1, 1]);
        learner.onTrigger(now + 10, POLICY, 1_000, true, 2);
        expect(learner.extraConcurrency).toBe(0);
        expect(Number.isFinite(learner.rate)).toBe(true);
        // The window of the refusal ends; then a quiet one at one slot, held back by it, under the pace
        // now learned: one slot more.
        now = windowOf(learner, now + 1_010, [1, 1, 1]);
        expect(learner.extraConcurrency).toBe(0);
        windowOf(learner, now + 10, [1, 1, 1], true);
        expect(learner.extraConcurrency).toBe(1);
    });

    test('refusals of one burst, inside the backoff the first started, bring the slots down to the cap', () => {
        const learner = new PaceLearner();
        learner.extraConcurrency = 3;
        // Two at once proved; four sent together, two refused at once: a cap of two. The first
        // refusal sees all four in flight, the second three (the first has been counted).
        const now = windowOf(learner, T0, [2, 2, 2]);
        learner.onTrigger(now + 10, POLICY, 1_000, true, 4);
        expect(learner.extraConcurrency).toBe(2);
        learner.onRefusedInBackoff(now + 10, 3);
        expect(learner.extraConcurrency).toBe(1);
        // Within what was proved it is no cap's: the slots stay.
        learner.onRefusedInBackoff(now + 10, 2);
        expect(learner.extraConcurrency).toBe(1);
    });

    test('beyond slots a quiet window proved, the unpaced start paces just under what they delivered', () => {
        const learner = new PaceLearner();
        learner.extraConcurrency = 3;
        // Six answers in a 1.2 s window at two in flight: 5 req/s delivered, quietly.
        const now = windowOf(learner, T0, [2, 2, 2]);
        learner.onTrigger(now + 10, POLICY, 1_000, true, 4);
        // Seven answers over the time since the first one plus the wait would read 7 / 2.2 s.
        expect(learner.rate).toBeCloseTo(0.95 * 5, 5);
    });

    /**
     * Two slots proved, then `refuse` (answering when): the slots come down to two, and after the
     * refusal's window and one the slots held back, the slots on top of one.
     */
    function slotsAfterKnee(refuse: (learner: PaceLearner, now: number) => number): number {
        const learner = new PaceLearner();
        learner.extraConcurrency = 3;
        const refusedAt = refuse(learner, windowOf(learner, T0, [2, 2, 2]));
        expect(learner.extraConcurrency).toBe(1);
        const now = windowOf(learner, refusedAt + 1_000, [2, 2, 2]);
        windowOf(learner, now + 10, [2, 2, 2], true);
        return learner.extraConcurrency;
    }

    test('once two slots were proved, the knee of a bare refusal at the unpaced start is sure: not tried one above', () => {
        const slots = slotsAfterKnee((learner, now) => {
            learner.onTrigger(now + 10, POLICY, 1_000, false, 3);
            return now + 10;
        });
        expect(slots).toBe(1);
    });

    test("a refusal that names its wait is a rate limiter's (a cap names none): its knee is tried one slot above", () => {
        const slots = slotsAfterKnee((learner, now) => {
            learner.onTrigger(now + 10, POLICY, 1_000, true, 3);
            return now + 10;
        });
        expect(slots).toBe(2);
    });

    test('refused after a request sent beyond the proven slots was accepted: no cap (it refuses the first one beyond), the knee is tried one above', () => {
        const slots = slotsAfterKnee((learner, now) => {
            // A third in flight, accepted; then a refusal with three in flight.
            learner.onDispatch(now, POLICY, 100, 3);
            learner.onAnswer(now + RESPONSE_MS, now);
            learner.onTrigger(now + RESPONSE_MS + 10, POLICY, 1_000, false, 3);
            return now + RESPONSE_MS + 10;
        });
        expect(slots).toBe(2);
    });
});

describe('the wait after a refusal that may be a concurrency cap', () => {
    test('beyond two proven slots, before anything sent beyond them was accepted: one interval of what they delivered', () => {
        const learner = new PaceLearner();
        learner.extraConcurrency = 3;
        // Six answers in a 1.2 s window at two in flight: 5 req/s delivered, quietly.
        const now = windowOf(learner, T0, [2, 2, 2]);
        learner.onDispatch(now, POLICY, 100, 3);
        learner.onDispatch(now, POLICY, 100, 4);
        expect(learner.firstWaitMs(4)).toBeCloseTo(1000 / (0.95 * 5), 5);
        // Within the proven slots it is no cap's: read as a bare refusal.
        expect(learner.firstWaitMs(2)).toBe(1_000);
    });

    test('once a request sent beyond the proven slots was accepted, no cap refused: a bare refusal', () => {
        const learner = new PaceLearner();
        learner.extraConcurrency = 3;
        const now = windowOf(learner, T0, [2, 2, 2]);
        learner.onDispatch(now, POLICY, 100, 3);
        learner.onAnswer(now + RESPONSE_MS, now);
        learner.onDispatch(now + RESPONSE_MS, POLICY, 100, 4);
        expect(learner.firstWaitMs(4)).toBe(1_000);
    });

    test('slots the window kept busy carry as many answers in flight as their time allows (Little), when more than it counted', () => {
        const learner = new PaceLearner();
        learner.extraConcurrency = 3;
        // Six answers in 1.2 s (5 a second), but the two slots held the scope back: at 50 ms an answer
        // two busy slots carry 40 a second; a window's count reads low by the time its first answer took.
        const now = windowOf(learner, T0, [2, 2, 2], true);
        learner.onDispatch(now, POLICY, 100, 4);
        expect(learner.firstWaitMs(4)).toBeCloseTo(1000 / (0.95 * 40), 5);
    });

    test('with one slot proved, two sent together are refused by a burst-1 bucket too: a bare refusal', () => {
        const learner = new PaceLearner();
        learner.extraConcurrency = 1;
        const now = windowOf(learner, T0, [1, 1, 1]);
        learner.onDispatch(now, POLICY, 100, 2);
        expect(learner.firstWaitMs(2)).toBe(1_000);
    });

    test('paced above what a quiet window proved, a refusal follows the pace: a bare refusal', () => {
        const learner = new PaceLearner(8);
        learner.safeRate = 4;
        learner.extraConcurrency = 3;
        const now = windowOf(learner, T0, [2, 2, 2]);
        learner.onDispatch(now, POLICY, 100, 4);
        expect(learner.firstWaitMs(4)).toBe(1_000);
    });
});
