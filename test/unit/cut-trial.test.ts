/**
 * Whether a scope's refusals follow its pace: a cut on trial is undone when the refused share holds
 * after it, except on refusals that may be the run before the cut, still counted by a limiter with a
 * memory, and after a cut that stayed above what the site surely sustained (then it cuts deeper). Times are epoch ms on a manual timeline.
 */
import { CutTrial } from '../../packages/throttling/src/pacing/cut-trial';
import type { PaceBounds } from '../../packages/throttling/src/pacing/cut-trial';

const T0 = 1_780_000_000_000;
const BEFORE: PaceBounds = { rate: 20, safeRate: 18, unsafeRate: 40 };

/** A trial of a cut from 20 to 6 req/s at a refused share of 1 in 10, after 100 dispatches, judged from T0 + 5 s. */
function trialOfCut(): CutTrial {
    const trial = new CutTrial();
    trial.begin(BEFORE, 6, 0.1, 100, true, T0 + 5_000);
    return trial;
}

describe('CutTrial', () => {
    test('refusals as frequent as before the cut, once judged, undo it: they come whatever the pace', () => {
        const trial = trialOfCut();
        const undo = jest.fn();
        expect(trial.follows(T0 + 6_000, 0.1, 6, 110, undo)).toBe(false);
        expect(trial.follows(T0 + 7_000, 0.1, 6, 120, undo)).toBe(false);
        expect(undo).toHaveBeenCalledWith(BEFORE);
        // That share no longer cuts; a larger one does.
        expect(trial.follows(T0 + 8_000, 0.1, 20, 130, undo)).toBe(false);
        expect(trial.follows(T0 + 9_000, 0.5, 20, 132, undo)).toBe(true);
    });

    test('refusals within as long after the cut as the run before it took do not undo it: they cut again', () => {
        const trial = trialOfCut();
        const undo = jest.fn();
        // haproxy still counts the run at 20 req/s: refused as often as before, whatever the new pace.
        expect(trial.follows(T0 + 1_000, 0.1, 6, 110, undo)).toBe(true);
        expect(trial.follows(T0 + 2_000, 0.1, 6, 120, undo)).toBe(true);
        expect(undo).not.toHaveBeenCalled();
        expect(trial.open).toBe(false);
    });

    test('refusals that outlast a cut above what the site surely sustained cut deeper instead of undoing it', () => {
        // A fixed window: the cut stayed above its waits-included delivery, and it refuses as before.
        const trial = new CutTrial();
        trial.begin(BEFORE, 6, 0.1, 100, true, T0 + 5_000, false);
        const undo = jest.fn();
        expect(trial.follows(T0 + 6_000, 0.1, 6, 110, undo)).toBe(false);
        expect(trial.deeper).toBe(false);
        expect(trial.follows(T0 + 7_000, 0.1, 6, 120, undo)).toBe(true);
        expect(undo).not.toHaveBeenCalled();
        expect(trial.deeper).toBe(true);
        // The deeper cut is judged as any other, and the next one reads the usual rate again.
        trial.begin(BEFORE, 2, 0.1, 120, true, T0 + 8_000, true);
        expect(trial.deeper).toBe(false);
    });

    test('a refusal clearly above the pace cut to is a probe: it closes the trial and cuts', () => {
        const trial = trialOfCut();
        const undo = jest.fn();
        expect(trial.follows(T0 + 6_000, 0.1, 7, 110, undo)).toBe(true);
        expect(trial.open).toBe(false);
        expect(undo).not.toHaveBeenCalled();
    });
});
