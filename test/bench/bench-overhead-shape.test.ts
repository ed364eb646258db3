import { b3Section } from '../../packages/bench/src/markdown';
import type { OverheadRow } from '../../packages/bench/src/overhead';
import { measure, type MeasureSpec, type OverheadMeasurement } from '../../packages/bench/src/overhead-measure';

describe('B3 measurement shape', () => {
    const spec = (extra: Partial<MeasureSpec>): MeasureSpec => ({
        store: 'RequestQueue',
        domains: 7,
        requests: 60,
        capMs: 60_000,
        heapCapShare: 0.9,
        ...extra,
    });

    it('adds and drains in batches, so at most a batch waits at once, and handles every request', async () => {
        for (const store of ['RequestQueue', 'shared'] as const) {
            const m = await measure(spec({ store, batch: 25, forefront: true }));
            expect(m).toMatchObject({ added: 60, completed: 60, handledTwice: 0, maxBacklog: 25, capped: false });
            // Read once, after the last batch is added (settled heap, not a sample of garbage).
            expect(Number.isFinite(m.queuedHeapMb) && Number.isFinite(m.retainedHeapMb)).toBe(true);
        }
    });

    it('adds every request before the first fetch without a batch', async () => {
        const m = await measure(spec({}));
        expect(m).toMatchObject({ added: 60, completed: 60, maxBacklog: 60, capped: false });
    });
});

describe('B3 table', () => {
    const m = (store: OverheadMeasurement['store'], retainedHeapMb: number, handledTwice = 0): OverheadMeasurement => ({
        store,
        domains: 100_000,
        requests: 300_000,
        added: 300_000,
        completed: 300_000,
        handledTwice,
        addMs: 1000,
        drainMs: 2000,
        totalMs: 3000,
        maxBacklog: 1000,
        emptyFetches: 0,
        peakRssMb: 500,
        queuedHeapMb: 200,
        retainedHeapMb,
        capped: false,
    });
    const row = (sharedRetainedPerDomainB: number, handledTwice = 0): OverheadRow => ({
        domains: 100_000,
        requests: 300_000,
        rounds: 1,
        forefront: true,
        batch: 1000,
        bare: m('RequestQueue', 30),
        layouts: [
            {
                layout: 'perDomain',
                notRun: 'too many queues',
                ratio: NaN,
                ratios: [],
                queuedPerDomainB: NaN,
                retainedPerDomainB: NaN,
            },
            {
                layout: 'shared',
                m: m('shared', 40, handledTwice),
                ratio: 1.2,
                ratios: [1.2],
                queuedPerDomainB: 2000,
                retainedPerDomainB: sharedRetainedPerDomainB,
            },
        ],
    });

    it('lists a layout that was not run, with the reason, and the shape of the row', () => {
        const md = b3Section([row(105)], 20_000);
        expect(md).toContain(
            "| 100,000 | manager, `queueLayout: 'perDomain'` | not run: too many queues | 1,000 added then drained at a time, forefront | — |",
        );
        expect(md).toMatch(/\| 100,000 \| manager, `queueLayout: 'shared'` \| 300000 \| 1,000 added then drained/);
    });

    it('checks the 100,000-domain target: complete and at most 1 KB kept per idle domain over the bare queue', () => {
        expect(b3Section([row(105)], 20_000)).toContain(
            '✅ complete (300,000 handled, each once), 105 B per idle domain',
        );
        expect(b3Section([row(1100)], 20_000)).toContain(
            '❌ complete (300,000 handled, each once), 1100 B per idle domain',
        );
        // 300,000 fetches of which 2 were repeats: two requests were never handled.
        const twice = b3Section([row(105, 2)], 20_000);
        expect(twice).toContain('❌ incomplete (299,998 of 300,000 handled), 105 B per idle domain');
        expect(twice).toMatch(/\| 100,000 \| manager, `queueLayout: 'shared'` \| 300000, 2 handled twice \|/);
    });
});
