/**
 * The refused bound of a pace learner, driven on its own: where a quiet window steps the pace, when an
 * unconfirmed bound is dropped, and when the bound is relaxed. Times are epoch ms on a manual timeline.
 */
import { RefusedBound } from '../../packages/throttling/src/pacing/refused-bound';

const T0 = 1_780_000_000_000;

describe('a refused bound', () => {
    test('a quiet window steps a quarter of the way to just under it', () => {
        const bound = new RefusedBound();
        bound.lower(T0, 8);
        expect(bound.raise(T0 + 1_000, 4, 1_000)).toBeCloseTo(5, 6);
        // Just under it already: held (no relaxing yet).
        expect(bound.raise(T0 + 2_000, 7.6, 1_000)).toBeUndefined();
        expect(bound.rate).toBe(8);
    });

    test('a step near it is held when the requests left would not gain what its refusal costs', () => {
        const bound = new RefusedBound();
        bound.noteRefusal(1_000);
        bound.lower(T0, 5.5);
        // 4.9 → 5.05 would save 40 pages 0.24 s; refused a quarter of the time, it costs a second and more.
        expect(bound.raise(T0 + 3_000, 4.9, 40)).toBeUndefined();
        // With 2,000 pages left it is worth it.
        expect(bound.raise(T0 + 3_000, 4.9, 2_000)).toBeGreaterThan(4.9);
    });

    test('unconfirmed, it is dropped once reached without a refusal: the pace doubles again', () => {
        const bound = new RefusedBound();
        bound.lower(T0, 2, true);
        // Unconfirmed, a step is taken whatever it risks: the probe is what confirms the bound.
        expect(bound.raise(T0 + 1_000, 1, 10)).toBeCloseTo(1.25, 6);
        expect(bound.raise(T0 + 2_000, 1.9, 10)).toBeCloseTo(3.8, 6);
        expect(bound.known).toBe(false);
    });

    test('is relaxed after a period and 200 requests without moving, and again while the relaxed pace lives', () => {
        const bound = new RefusedBound();
        bound.lower(T0, 5);
        bound.noteDispatches(199);
        expect(bound.raise(T0 + 31_000, 4.75, 1_000)).toBeUndefined();
        expect(bound.rate).toBe(5);
        bound.noteDispatches(1);
        expect(bound.raise(T0 + 31_000, 4.75, 1_000)).toBeUndefined();
        expect(bound.rate).toBeCloseTo(6.25, 6);
        expect(bound.heldRate).toBe(4.75);
        // The relaxed pace reached without a refusal: relaxed again at once.
        expect(bound.raise(T0 + 40_000, 6.25 * 0.95, 1_000)).toBeUndefined();
        expect(bound.rate).toBeCloseTo(6.25 * 1.25, 6);
        expect(bound.heldRate).toBe(4.75);
    });
});
