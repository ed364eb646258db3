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

describe('doubling under the rate the crawl was refused at from its start', () => {
    test('steps a quarter of the way to just under it where twice the pace would pass it', () => {
        const pace = new LearnedPace(1.8);
        pace.capDoubling(3.4);
        pace.onQuiet(T0, 10, true, 1_000, RAMPUP_DEFAULTS);
        expect(pace.rate).toBeCloseTo(1.8 + (3.4 - 1.8) * 0.25, 6);
        expect(pace.bound.known).toBe(false);
    });

    test('doubles as before while twice the pace is far under it, and resumes doubling once it is reached', () => {
        const pace = new LearnedPace(1);
        pace.capDoubling(100);
        pace.onQuiet(T0, 10, true, 1_000, RAMPUP_DEFAULTS);
        expect(pace.rate).toBe(2);
        const near = new LearnedPace(3);
        near.capDoubling(3.1);
        near.onQuiet(T0, 10, true, 1_000, RAMPUP_DEFAULTS);
        // Reached without a refusal (3 ≥ 0.95 × 3.1): not the site's rate after all.
        expect(near.rate).toBe(6);
    });

    test('a refusal sets the bound, and the start no longer caps anything', () => {
        const pace = new LearnedPace(2);
        pace.capDoubling(3);
        pace.measured(T0, 2, 2.5, RAMPUP_DEFAULTS);
        pace.bound.rate = Number.POSITIVE_INFINITY;
        pace.onQuiet(T0 + 1_000, 10, true, 1_000, RAMPUP_DEFAULTS);
        expect(pace.rate).toBeCloseTo(2 * 0.95 * 2, 6);
    });

    test('a start slower than the pace learned caps nothing', () => {
        const pace = new LearnedPace(2);
        pace.capDoubling(1.5);
        pace.onQuiet(T0, 10, true, 1_000, RAMPUP_DEFAULTS);
        expect(pace.rate).toBe(4);
    });
});

describe('a cut with no delivery and no quiet pace to go back to', () => {
    test('halves the rate the refusals prove the site under, where that is below the refused pace', () => {
        const pace = new LearnedPace(6.67);
        pace.cut(T0, undefined, false, 0, RAMPUP_DEFAULTS, 3.15);
        expect(pace.rate).toBeCloseTo((3.15 / 2) * 0.95, 6);
    });

    test('halves the refused pace where nothing proves the site slower', () => {
        const pace = new LearnedPace(6.67);
        pace.cut(T0, undefined, false, 0, RAMPUP_DEFAULTS);
        expect(pace.rate).toBeCloseTo((6.67 / 2) * 0.95, 6);
        const loose = new LearnedPace(6.67);
        loose.cut(T0, undefined, false, 0, RAMPUP_DEFAULTS, 9);
        expect(loose.rate).toBeCloseTo((6.67 / 2) * 0.95, 6);
    });

    test('a delivery, where there is one, still sets the cut', () => {
        const pace = new LearnedPace(6.67);
        pace.cut(T0, 2.5, false, 0, RAMPUP_DEFAULTS, 3.15);
        expect(pace.rate).toBeCloseTo(2.5 * 0.95, 6);
    });
});
