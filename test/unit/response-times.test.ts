/**
 * A scope's response times: the least over one to two periods and the current window's median and
 * spacing. Times are epoch ms on a manual timeline.
 */
import { ResponseTimes } from '../../packages/throttling/src/pacing/response-times';

const T0 = 1_780_000_000_000;

describe('ResponseTimes', () => {
    test("the window's spacing rate is its answers less one over the time between the first and the last", () => {
        const times = new ResponseTimes(30_000);
        // Behind a limiter letting one out every 1,667 ms; the first answer met no queue (60 ms).
        times.add(T0 + 60, 60, true);
        times.add(T0 + 1_727, 1_667, true);
        times.add(T0 + 3_394, 1_667, true);
        expect(times.windowSpacingRate()).toBeCloseTo(2_000 / 3_334, 9);
        // Answers of requests sent before the window do not count in it.
        times.add(T0 + 3_400, 5_000, false);
        expect(times.windowSpacingRate()).toBeCloseTo(2_000 / 3_334, 9);
    });

    test('with fewer than two answers, or all at one instant, there is no spacing to read', () => {
        const times = new ResponseTimes(30_000);
        expect(times.windowSpacingRate()).toBeNaN();
        times.add(T0, 50, true);
        expect(times.windowSpacingRate()).toBeNaN();
        times.add(T0, 50, true);
        expect(times.windowSpacingRate()).toBeNaN();
    });

    test('a new window starts the spacing afresh; the least response time stays', () => {
        const times = new ResponseTimes(30_000);
        times.add(T0, 40, true);
        times.add(T0 + 100, 90, true);
        times.newWindow();
        expect(times.windowSpacingRate()).toBeNaN();
        expect(times.windowCount).toBe(0);
        times.add(T0 + 1_000, 70, true);
        times.add(T0 + 1_500, 70, true);
        expect(times.windowSpacingRate()).toBeCloseTo(2, 6);
        expect(times.minMs).toBe(40);
    });

    test('a typical answer is the median of the last window without a queue, else the least', () => {
        const times = new ResponseTimes(30_000);
        times.add(T0, 20, true);
        times.add(T0 + 300, 30, true);
        // No window kept yet: the least.
        expect(times.typicalMs).toBe(20);
        // Fewer answers than a median is read from: the least still.
        times.keepTypical();
        expect(times.typicalMs).toBe(20);
        // A short window is read with the one before: 20, 30 and 30.
        times.newWindow();
        times.add(T0 + 600, 30, true);
        times.keepTypical();
        expect(times.typicalMs).toBe(30);
        // A window with a queue is not kept: the typical answer stays the unloaded one.
        times.newWindow();
        for (const [at, ms] of [
            [900, 80],
            [1_200, 90],
            [1_500, 85],
        ])
            times.add(T0 + at, ms, true);
        expect(times.typicalMs).toBe(30);
        times.keepTypical();
        expect(times.typicalMs).toBe(85);
    });
});
