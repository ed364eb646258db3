/**
 * When a delivery sample is exact: the site, not the crawler's own pace, set how fast answers came. A
 * cut on an exact sample settles the refused bound just above it (no probing up to the refused pace
 * until the next relaxing), so a sample the pace held low must not read as exact.
 */
import { DeliveryPoints } from '../../packages/throttling/src/pacing/delivery-points';
import { PACE_GAIN } from '../../packages/throttling/src/pacing/pace-learner-constants';

const T0 = 1_780_000_000_000;
const PERIOD_MS = 30_000;
const WINDOW_MS = 1_000;

/** A sample 4 s after an empty point with no wait, paced at `pace` throughout, `answers` accepted. */
function sampleAfter(pace: number, answers: number) {
    const points = new DeliveryPoints(PERIOD_MS);
    points.add(T0, 0, pace, 0);
    return points.sample(T0 + 4_000, answers, WINDOW_MS, PACE_GAIN, 1)!;
}

describe('an exact delivery sample', () => {
    test('answers as fast as the pace asked (less its own overhead) are the pace, not the site', () => {
        // Paced at 3.61 req/s, 14 answers in 4 s (3.5 req/s): what a site far faster would also give.
        const sample = sampleAfter(3.61, 14);
        expect(sample.rate).toBeCloseTo(3.5);
        expect(sample.exact).toBe(false);
    });

    test('answers clearly slower than the pace asked are the site', () => {
        // Paced at 5.35 req/s, 16 answers in 4 s (4 req/s): the site held them back.
        const sample = sampleAfter(5.35, 16);
        expect(sample.rate).toBeCloseTo(4);
        expect(sample.exact).toBe(true);
    });

    test('a pace that fell below the delivery since the point makes no sample exact', () => {
        const points = new DeliveryPoints(PERIOD_MS);
        points.add(T0, 0, 5.35, 0);
        points.notePace(3);
        expect(points.sample(T0 + 4_000, 16, WINDOW_MS, PACE_GAIN, 1)!.exact).toBe(false);
    });
});
