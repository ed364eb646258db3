/**
 * The pace of one scope's learner, driven on its own: which refusals came right after a probe step
 * (their cut needs no trial). Times are epoch ms on a manual timeline.
 */
import { LearnedPace } from '../../packages/throttling/src/pacing/learned-pace';
import { RAMPUP_DEFAULTS } from '../../packages/throttling/src/pacing/rampup-policy';

const T0 = 1_780_000_000_000;

/** A pace of 4 req/s under a bound refused at 8, stepped up by a quiet window after `dispatched` dispatches. */
function probedAfter(dispatched: number): LearnedPace {
    const pace = new LearnedPace(4);
    pace.bound.lower(T0, 8);
    pace.onQuiet(T0 + 1_000, dispatched, true, 1_000, RAMPUP_DEFAULTS);
    expect(pace.rate).toBeGreaterThan(4);
    return pace;
}

describe('a refusal right after a probe step', () => {
    test('within the last fifth of its run: the step was refused', () => {
        const pace = probedAfter(100);
        // A run of 100 requests, the step 10 before its end.
        expect(pace.refusedAfterProbe(110, 100)).toBe(true);
    });

    test('earlier in its run, or with no step at all: perhaps a share refused whatever the pace', () => {
        expect(probedAfter(100).refusedAfterProbe(130, 100)).toBe(false);
        expect(new LearnedPace(4).refusedAfterProbe(110, 100)).toBe(false);
    });

    test('a doubling before any bound is no probe step', () => {
        const pace = new LearnedPace(4);
        pace.onQuiet(T0, 100, true, 1_000, RAMPUP_DEFAULTS);
        expect(pace.rate).toBe(8);
        expect(pace.refusedAfterProbe(101, 100)).toBe(false);
    });
});
