import { PersistentRateLimitError } from 'crawlee-throttling';
import { ThrottlingEventEmitter } from '../../packages/throttling/src/core/throttling-events';
import type { WakeSignal } from '../../packages/throttling/src/readiness/wake-signal';
import type { StatePersister } from '../../packages/throttling/src/persistence/state-persister';
import { CrawlEnd } from '../../packages/throttling/src/readiness/crawl-end';
import type { DomainReport } from '../../packages/throttling/src/readiness/domain-report';
import type { Readiness } from 'crawlee-throttling';
import { readinessOf } from '../../packages/throttling/src/readiness/readiness';

function crawlEnd() {
    const events = new ThrottlingEventEmitter(() => undefined);
    const stalled: unknown[] = [];
    events.on('stalled', (event) => stalled.push(event));
    const end = new CrawlEnd({
        report: { stats: () => [] } as unknown as DomainReport,
        wake: { clear: () => undefined } as unknown as WakeSignal,
        persister: { save: async () => undefined, stop: () => undefined } as unknown as StatePersister,
        events,
        info: () => undefined,
    });
    return { end, stalled };
}

const stall = (stalledForMs: number): Readiness =>
    readinessOf('stalled', { domains: [{ domain: 'closed.example', queued: 2, stalledForMs }] });

describe('the end of a crawl', () => {
    test('a stall seen by two isFinished() calls is announced once, and thrown by both', async () => {
        const { end, stalled } = crawlEnd();
        // The second call, a moment later, measures a longer stall of the same domain.
        const both = await Promise.allSettled([end.settle(stall(3_319)), end.settle(stall(3_450))]);
        expect(both.map((r) => r.status === 'rejected' && r.reason instanceof PersistentRateLimitError)).toEqual([
            true,
            true,
        ]);
        expect(stalled).toEqual([{ domain: 'closed.example', queued: 2, stalledForMs: 3_319 }]);
    });

    test('a domain that stalls again after its stall ended is announced again', async () => {
        const { end, stalled } = crawlEnd();
        await expect(end.settle(stall(3_000))).rejects.toThrow(PersistentRateLimitError);
        await expect(end.settle(readinessOf('waiting', { readyAt: 10_000, inFlight: 0 }))).resolves.toBe(false);
        await expect(end.settle(stall(9_000))).rejects.toThrow(PersistentRateLimitError);
        expect(stalled).toHaveLength(2);
    });
});
