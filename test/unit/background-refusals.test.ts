import { BackgroundRefusals, bucketShare, refillShare } from '../../packages/throttling/src/pacing/background-refusals';
import type { PaceBounds } from '../../packages/throttling/src/pacing/background-refusals';

const BOUNDS: PaceBounds = { rate: 4, safeRate: 4, unsafeRate: Infinity, quietPaces: [2] };

/** `runs` runs of `length` dispatches, each ended by a refusal. */
function refuse(b: BackgroundRefusals, length: number, runs = 1): void {
    for (let r = 0; r < runs; r++) {
        for (let i = 0; i < length; i++) b.onDispatch();
        b.onRefusal();
    }
}

describe('bucketShare: what a token bucket would refuse at another pace', () => {
    test('a run of 5 at 4 req/s is a bucket of 3 req/s: at 2.96 req/s it refuses nothing', () => {
        expect(bucketShare(4, 0.2, 2.96)).toBe(0);
        expect(bucketShare(4, 0.2, 8)).toBeCloseTo(1 / (1 + 1 / (1 - 3 / 8)), 10);
    });

    test('every other request refused says nothing of the rate: a one-token bucket does so at any pace above it', () => {
        expect(bucketShare(4, 0.5, 2)).toBe(0.5);
    });
});

describe('refillShare: what a token bucket refuses given the waits it imposes', () => {
    test('each wait refills rate x wait tokens, which a faster pace drains at (pace - rate) per second', () => {
        // 1.4 req/s, 1 s waits, paced at 2.25: 1.4 / (1 - 1.4 / 2.25) = 3.7 requests through per refusal.
        expect(refillShare(1.4, 1_000, 2.25)).toBeCloseTo(1 / (1 + 1.4 / (1 - 1.4 / 2.25)), 10);
        expect(refillShare(1.4, 1_000, 1.3)).toBe(0); // at or under the rate: nothing refused
        expect(refillShare(0, 1_000, 2)).toBe(0); // no rate known: no reading
    });
});

describe('BackgroundRefusals: a cut on trial', () => {
    test('a share the bucket delivering before the cut explains (refilled by the waits) is no background: the cut stands', () => {
        // Runs of 4 at 4 req/s read as a 2.67 req/s bucket refusing nothing at 2.25; but the site
        // delivered 1.4 req/s over time, with 1 s waits: at 2.25 it refuses about one in five.
        const tried = new BackgroundRefusals();
        refuse(tried, 4, 2);
        tried.onCut(BOUNDS, true, { pace: 2.25, delivered: 1.4, waitMs: 1_000 });
        refuse(tried, 4);
        expect(tried.judge(2.25)).toEqual({ kind: 'followed' });
        // Read from the runs alone, the same refusals would undo the cut.
        const runsOnly = new BackgroundRefusals();
        refuse(runsOnly, 4, 2);
        runsOnly.onCut(BOUNDS, true);
        refuse(runsOnly, 4);
        expect(runsOnly.judge(2.25)).toEqual({ kind: 'held' });
        refuse(runsOnly, 4);
        expect(runsOnly.judge(2.25)).toEqual({ kind: 'undo', bounds: BOUNDS });
    });

    test('refused as often after a cut as before: the first refusal is held, the second undoes the cut', () => {
        const b = new BackgroundRefusals();
        refuse(b, 5, 2);
        b.onCut(BOUNDS, true);
        refuse(b, 5);
        expect(b.judge(3)).toEqual({ kind: 'held' });
        refuse(b, 5);
        expect(b.judge(3)).toEqual({ kind: 'undo', bounds: BOUNDS });
        expect(b.share).toBeCloseTo(0.2, 10);
        // Refusals no oftener than that are background; clearly oftener ones are not.
        refuse(b, 5);
        expect(b.isBackground()).toBe(true);
        refuse(b, 2, 3);
        expect(b.isBackground()).toBe(false);
    });

    test('a share that fell after the cut followed the pace: the cut stands, nothing is background', () => {
        const b = new BackgroundRefusals();
        refuse(b, 5, 2);
        b.onCut(BOUNDS, true);
        refuse(b, 12);
        expect(b.judge(3)).toEqual({ kind: 'followed' });
        expect(b.share).toBe(0);
        expect(b.isBackground()).toBe(false);
    });

    test('a shallow cut (above the accepted share of the refused pace) is not judged: it stands', () => {
        const b = new BackgroundRefusals();
        refuse(b, 5, 2);
        b.onCut(BOUNDS, true);
        refuse(b, 5);
        expect(b.judge(3.5)).toEqual({ kind: 'followed' });
    });

    test('a share that rose after the cut (a one-token bucket above its rate) followed the pace', () => {
        const b = new BackgroundRefusals();
        refuse(b, 4);
        b.onCut(BOUNDS, true);
        refuse(b, 2);
        expect(b.judge(2)).toEqual({ kind: 'followed' });
    });

    test('dispatches the shared clock turned back do not count in the refused share', () => {
        const b = new BackgroundRefusals();
        refuse(b, 5, 2);
        b.onCut(BOUNDS, true);
        for (let i = 0; i < 20; i++) {
            b.onDispatch();
            b.undoDispatch();
        }
        refuse(b, 5);
        expect(b.judge(3)).toEqual({ kind: 'held' });
    });

    test('rare refusals and announced empty quotas put no cut on trial', () => {
        const rare = new BackgroundRefusals();
        refuse(rare, 20);
        rare.onCut(BOUNDS, true);
        refuse(rare, 20);
        expect(rare.judge(3)).toEqual({ kind: 'none' });
        const quota = new BackgroundRefusals();
        refuse(quota, 5);
        quota.onCut(BOUNDS, false);
        refuse(quota, 5);
        expect(quota.judge(3)).toEqual({ kind: 'none' });
    });

    test('a site refusing every other request whatever the pace is never called background', () => {
        const b = new BackgroundRefusals();
        refuse(b, 2, 2);
        b.onCut(BOUNDS, true);
        refuse(b, 2, 2);
        expect(b.judge(2)).toEqual({ kind: 'followed' });
        expect(b.share).toBe(0);
    });
});
