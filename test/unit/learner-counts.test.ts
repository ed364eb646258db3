/**
 * What a pace learner counts of its scope's traffic, its own and other processes', on a manual
 * timeline (epoch ms).
 */
import { LearnerCounts } from '../../packages/throttling/src/pacing/learner-counts';

const T0 = 1_780_000_000_000;

describe('LearnerCounts', () => {
    test('the site backlog is the backlog here over this process’s share of the dispatches', () => {
        const counts = new LearnerCounts();
        expect(counts.siteBacklog).toBe(Number.POSITIVE_INFINITY);
        counts.dispatch(T0, 10);
        // Alone: the backlog here is the site's.
        expect(counts.siteBacklog).toBe(10);
        // Three other processes sent 3 more: this one holds a quarter of the crawl.
        counts.others(T0, 3, 0);
        expect(counts.siteBacklog).toBe(40);
    });

    test('a refusal answers the run since the one before, at least one, undone dispatches left out', () => {
        const counts = new LearnerCounts();
        expect(counts.refusal()).toBe(1);
        for (let i = 0; i < 5; i++) counts.dispatch(T0 + i, 100);
        counts.undoDispatch();
        expect(counts.refusal()).toBe(4);
        // A dispatch counted before the refusal is not taken back from the run after it.
        counts.undoDispatch();
        expect(counts.dispatched).toBe(4);
        expect(counts.refusal()).toBe(1);
    });

    test('a delivery sample ends now alone, and where the other processes’ counts last came beside them', () => {
        const counts = new LearnerCounts();
        counts.answer(T0);
        expect(counts.sampleEnd(T0 + 500)).toEqual({ at: T0 + 500, answered: 1 });
        counts.others(T0 + 600, 3, 3);
        counts.answer(T0 + 900);
        // This process's answer after the others' counts is left for the next sample with theirs.
        expect(counts.sampleEnd(T0 + 1_000)).toEqual({ at: T0 + 600, answered: 4 });
        expect(counts.answered).toBe(5);
    });

    test('the first answer is the first anyone had: another process’s if it came first', () => {
        const counts = new LearnerCounts();
        counts.others(T0 + 100, 2, 0);
        expect(counts.firstAnswerAt).toBe(-1);
        counts.others(T0 + 200, 1, 2);
        counts.answer(T0 + 300);
        expect(counts.firstAnswerAt).toBe(T0 + 200);
    });
});

describe('LearnerCounts: the requests a bucket is fitted to', () => {
    /** Two refusals of a 4 req/s burst-1 bucket, paced at 5 between them: logged, a bucket fits. */
    function refusedTwice(counts: LearnerCounts): void {
        for (let i = 0; i <= 10; i++) {
            const at = T0 + i * 200;
            counts.dispatch(at, 100);
            if (i % 5 === 0) counts.refused(at);
            else counts.answer(at + 50, at);
        }
    }

    test('its own requests, answered and refused, fit a bucket', () => {
        const counts = new LearnerCounts();
        refusedTwice(counts);
        expect(counts.fit(10)).toBeDefined();
    });

    test('beside other processes sending to the site, none is fitted', () => {
        const counts = new LearnerCounts();
        counts.others(T0, 3, 0);
        refusedTwice(counts);
        expect(counts.fit(10)).toBeUndefined();
    });
});
