import type { ThrottlingRequestManager } from 'crawlee-throttling';

/**
 * When the manager can next hand a request out, from its public answers: now when it is ready, the
 * earliest clock of a waiting domain (`checkReadiness()`), or, while a domain stalls, the earliest
 * clock of a domain with queued work (`snapshot()`); undefined when nothing waits for a clock.
 * Simulations move a manual clock to it.
 */
export async function nextReadyAt(manager: ThrottlingRequestManager): Promise<number | undefined> {
    const readiness = await manager.checkReadiness();
    const now = manager.options.clock.now();
    if (readiness.status === 'ready') return now;
    if (readiness.status === 'stalled') {
        const queued = manager.snapshot().filter((d) => d.queued > 0 && Number.isFinite(d.readyAt));
        return queued.length === 0 ? undefined : Math.max(now, Math.min(...queued.map((d) => d.readyAt)));
    }
    if (readiness.status !== 'waiting' || readiness.readyAt === null) return undefined;
    return Number.isFinite(readiness.readyAt) ? readiness.readyAt : undefined;
}
