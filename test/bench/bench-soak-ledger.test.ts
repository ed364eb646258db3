import { heapSlopeMbPerMin, sampleAt, sparkline } from '../../packages/bench/src/heap-trend';
import { SoakLedger } from '../../packages/bench/src/soak-ledger';

describe('SoakLedger (B6 bookkeeping)', () => {
    const hosts = ['a.example', 'b.example'];
    const entry = (site: string, path: string, status = 200, reset?: true) => ({
        site,
        path,
        time: 0,
        status,
        inFlightAtArrival: 1,
        ...(reset ? { reset } : {}),
    });

    it('counts a URL enqueued or seen by the server, but neither handled nor failed, as lost', () => {
        const ledger = new SoakLedger(hosts, 3);
        ledger.enqueued('http://a.example/');
        ledger.enqueued('http://a.example/page/0');
        ledger.enqueued('http://a.example/page/0'); // a duplicate link is one URL
        ledger.enqueued('http://b.example/page/2');
        ledger.fold([entry('b.example', '/page/1'), entry('a.example', '/robots.txt')]);
        ledger.handled('http://a.example/');
        ledger.failed('http://b.example/page/2');
        expect(ledger.summary()).toMatchObject({
            enqueued: 3,
            seen: 1,
            handled: 1,
            failed: 1,
            lost: 2, // a.example/page/0 never finished; b.example/page/1 reached the server unenqueued
            seenNotEnqueued: 1,
        });
        expect(ledger.distinctEnqueued).toBe(3);
        ledger.handled('http://a.example/page/0');
        ledger.handled('http://b.example/page/1');
        expect(ledger.summary().lost).toBe(0);
    });

    it('flags requests handled twice or handled and failed, and URLs outside the sites', () => {
        const ledger = new SoakLedger(hosts, 3);
        ledger.handled('http://a.example/page/1');
        ledger.handled('http://a.example/page/1');
        ledger.handled('http://b.example/');
        ledger.failed('http://b.example/');
        ledger.enqueued('http://a.example/page/3'); // past the last page
        ledger.enqueued('http://c.example/');
        ledger.failed('not a url');
        expect(ledger.summary()).toMatchObject({ handledTwice: 1, handledAndFailed: 1 });
        expect(ledger.unexpected).toBe(3);
    });

    it('folds server counts, robots.txt left out', () => {
        const ledger = new SoakLedger(hosts, 3);
        ledger.fold([
            entry('a.example', '/page/0', 429),
            entry('a.example', '/page/0', 503),
            entry('a.example', '/page/0', 200, true),
            entry('a.example', '/page/0'),
            entry('a.example', '/robots.txt'),
        ]);
        expect(ledger.server).toEqual({ requests: 4, refusals: 2, resets: 1 });
        expect(ledger.summary().seen).toBe(1);
    });
});

describe('heap trend (B6)', () => {
    const mb = 2 ** 20;
    it('fits the slope over the second half only, in MB per minute', () => {
        // Grows 10 MB/min for the first minute, then flat.
        const samples = Array.from({ length: 25 }, (_, i) => {
            const atMs = i * 5_000;
            return { atMs, heapUsed: 50 * mb + Math.min(atMs, 60_000) * ((10 * mb) / 60_000) };
        });
        expect(heapSlopeMbPerMin(samples, 0)).toBeGreaterThan(3);
        expect(heapSlopeMbPerMin(samples, 0.5)).toBeCloseTo(0, 6);
        expect(heapSlopeMbPerMin(samples.slice(0, 12), 0)).toBeCloseTo(10, 6);
        expect(heapSlopeMbPerMin([], 0.5)).toBeNaN();
    });

    it('picks the sample nearest a fraction of the run and draws a sparkline', () => {
        const samples = [0, 1_000, 2_000, 10_000].map((atMs) => ({ atMs, heapUsed: atMs }));
        expect(sampleAt(samples, 0.1)?.atMs).toBe(1_000);
        expect(sampleAt(samples, 1)?.atMs).toBe(10_000);
        expect(sparkline([1, 2, 3, 4, 5, 6, 7, 8])).toBe('▁▂▃▄▅▆▇█');
        expect(sparkline([5, 5, 5])).toBe('▁▁▁');
        expect(sparkline([1, 1, 9, 9], 2)).toBe('▁█');
    });
});
