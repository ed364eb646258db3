/**
 * Where a B8 crawler process spends its time on the shared storage and clock: each call of the
 * RedisDomainClock and of its request queues' clients is timed (wall time awaited, calls, and how
 * many said "not now": a clock or slot refused, a listAndLockHead that locked nothing). The probe
 * wraps the objects' methods in place, so the throttler and Crawlee use them unchanged.
 */

/** Calls of one method: how many, how long they were awaited in total (ms), how many came back empty. */
export interface CallTally {
    calls: number;
    ms: number;
    empty: number;
}

export type ProbeTallies = Record<string, CallTally>;

type AnyMethod = (...args: unknown[]) => unknown;

/** Whether an answer means "nothing now": a refused reservation or slot, an empty head. */
function emptyAnswer(answer: unknown): boolean {
    if (answer === null) return true;
    if (typeof answer !== 'object') return false;
    const a = answer as { granted?: unknown; items?: unknown };
    if (a.granted === false) return true;
    return Array.isArray(a.items) && a.items.length === 0;
}

export class FrontierProbe {
    readonly tallies: ProbeTallies = {};

    /** Times every listed method of `target` (those it has), under `<label>.<method>`. */
    wrap<T extends object>(target: T, label: string, methods: readonly string[]): T {
        const record = target as unknown as Record<string, AnyMethod>;
        for (const name of methods) {
            const original = record[name];
            if (typeof original !== 'function') continue;
            const tally: CallTally = (this.tallies[`${label}.${name}`] ??= { calls: 0, ms: 0, empty: 0 });
            record[name] = function (this: unknown, ...args: unknown[]) {
                const start = performance.now();
                const done = (answer: unknown) => {
                    tally.calls += 1;
                    tally.ms += performance.now() - start;
                    if (emptyAnswer(answer)) tally.empty += 1;
                    return answer;
                };
                const answer = original.apply(this, args);
                return answer instanceof Promise ? answer.then(done) : done(answer);
            };
        }
        return target;
    }
}

export const CLOCK_METHODS = [
    'reserve',
    'reserveMany',
    'extend',
    'settle',
    'acquireSlot',
    'renewSlot',
    'releaseSlot',
    'tally',
    'shareRate',
] as const;

export const QUEUE_METHODS = [
    'listAndLockHead',
    'batchAddRequests',
    'updateRequest',
    'deleteRequestLock',
    'prolongRequestLock',
    'get',
] as const;
