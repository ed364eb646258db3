import type { EmptyPoint } from '../../packages/throttling/src/pacing/delivery-points';
import { Lockout } from '../../packages/throttling/src/pacing/lockout';

const GAP = 2_000;

/** A run of `run` answers from t = 0, refused at `refusedAt`, then retries refused at `retries`. */
function lockedOut(run: number, refusedAt: number, retries: number[]): Lockout {
    const point: EmptyPoint = { at: refusedAt, answered: run, minPace: Number.POSITIVE_INFINITY, waitMs: 1_000 };
    const lockout = new Lockout();
    lockout.begin(point, 0, 0);
    for (const at of retries) lockout.retried(at, GAP);
    return lockout;
}

describe('a lockout read by the probe that ends it', () => {
    test('reads the run over the time to the probe, and over the time to the last refused retry', () => {
        // 7 answers from t = 0, refused at 0.5 s, retries refused at 1.5, 3.5 and 7.5 s, a probe through at 12.5 s.
        const reading = lockedOut(7, 500, [1_500, 3_500, 7_500]).end(12_500, 100);
        expect(reading).toEqual({ rate: 7 / 12.5, upper: 7 / 7.5, spanMs: 12_500 });
    });

    test('reads a retry skipped after the long gap as refused: the upper reading is at most twice the lower', () => {
        // Retries refused at 1.5 and 3.5 s; the one at 7.5 s skipped, a probe through at 15.5 s. The
        // last refused retry alone would read 2 req/s, and pace the site at their mean, 0.95 req/s.
        const reading = lockedOut(7, 500, [1_500, 3_500]).end(15_500, 100);
        expect(reading).toEqual({ rate: 7 / 15.5, upper: (2 * 7) / 15.5, spanMs: 15_500 });
    });

    test('a retry after the long gap that the site named the wait of was not skipped: nothing is read as refused', () => {
        // Retries refused at 1.5 and 3.5 s, the wait after the second the site's own: the upper reading stands.
        const point: EmptyPoint = { at: 500, answered: 7, minPace: Number.POSITIVE_INFINITY, waitMs: 1_000 };
        const lockout = new Lockout();
        lockout.begin(point, 0, 0);
        lockout.retried(1_500, GAP);
        lockout.retried(3_500, GAP, false);
        expect(lockout.end(15_500, 100)).toEqual({ rate: 7 / 15.5, upper: 7 / 3.5, spanMs: 15_500 });
    });

    test('a long gap is one of two seconds or more since the last refusal, inside a lockout', () => {
        const lockout = lockedOut(7, 500, [1_500]);
        expect(lockout.longGapAt(3_499, GAP)).toBe(false);
        expect(lockout.longGapAt(3_500, GAP)).toBe(true);
        lockout.end(3_600, 100);
        expect(lockout.longGapAt(9_000, GAP)).toBe(false);
    });

    test('reads nothing until a retry was refused a long gap after the refusal before it', () => {
        // Retries 1 s apart: a bucket of 0.5 req/s or more could have refused them.
        expect(lockedOut(7, 500, [1_500, 2_500, 3_400]).end(5_000, 100)).toBeUndefined();
        expect(lockedOut(7, 500, [1_500, 3_500]).end(7_500, 100)).toBeDefined();
    });

    test('a run of one answer reads nothing: a one-token bucket has no burst to read a rate from', () => {
        expect(lockedOut(1, 500, [1_500, 3_500]).end(7_500, 100)).toBeUndefined();
    });

    test('reads nothing when the requests left fit in the next run, less the retries the limiter counts', () => {
        // 7 answers, 2 refused retries: 4 left fit in the 5 the site grants again; 5 left do not.
        expect(lockedOut(7, 500, [1_500, 3_500]).end(7_500, 4)).toBeUndefined();
        expect(lockedOut(7, 500, [1_500, 3_500]).end(7_500, 5)).toBeDefined();
    });

    test('an answer to a request sent before the refusal does not end it; the first one after does', () => {
        const lockout = lockedOut(7, 500, [1_500, 3_500]);
        expect(lockout.end(400, 100)).toBeUndefined();
        expect(lockout.end(7_500, 100)).toBeDefined();
        expect(lockout.end(8_000, 100)).toBeUndefined();
    });
});
