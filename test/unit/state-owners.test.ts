import { ManualClock } from '../../packages/throttling/src';
import type { ThrottlingRequestManagerOptions } from '../../packages/throttling/src';
import { assemble } from '../../packages/throttling/src/orchestration/assemble';
import { resolveThrottlingOptions } from '../../packages/throttling/src/config/resolve-options';
import type { ScopedSource } from '../../packages/throttling/src/scopes/scope-router';
import { memoryConfig } from '../helpers/storage';

const quiet = { info: () => undefined, warning: () => undefined, warningOnce: () => undefined, error: () => undefined };
/** Lets promise callbacks (a settled origin check) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** The collaborators of a shared-layout manager whose origin checks (robots.txt) answer at once. */
function build(options: Partial<ThrottlingRequestManagerOptions> = {}) {
    const clock = new ManualClock();
    const resolved = resolveThrottlingOptions({ domains: 'all', queueLayout: 'shared', clock, ...options });
    const parts = assemble(resolved, memoryConfig(), quiet);
    parts.gate.set(async () => undefined);
    return { clock, parts };
}

/** Meets a key as a request of it comes out of `inner`, and lets its origin check settle. */
async function meet(parts: ReturnType<typeof build>['parts'], url: string) {
    const entry = await parts.intake.target({ url } as ScopedSource, 'skip');
    await settle();
    return entry!;
}

describe('the origin gate keeps its books per key, and lets go of them with the key', () => {
    test('an evicted key leaves no origin book behind', async () => {
        const { clock, parts } = build({ maxThrottledDomains: 1 });
        const a = await meet(parts, 'https://a.com/1');
        expect(parts.gate.books.peek(a)?.checkedOrigins?.has('https://a.com')).toBe(true);
        clock.advance(60_000);
        await meet(parts, 'https://b.com/1');
        expect(parts.registry.get('a.com')).toBeUndefined();
        expect(parts.gate.books.peek(a)).toBeUndefined();
    });

    test('a purge forgets every origin book', async () => {
        const { parts } = build();
        const a = await meet(parts, 'https://a.com/1');
        expect(parts.gate.books.peek(a)).toBeDefined();
        await parts.purger.purge();
        expect(parts.gate.books.peek(a)).toBeUndefined();
    });
});
