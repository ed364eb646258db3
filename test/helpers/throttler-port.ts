import type { ThrottlingRequestManager } from 'crawlee-throttling';

import * as composition from '../../packages/throttling/src/orchestration/assemble';
import type { ThrottlerPort } from '../../packages/throttling/src/orchestration/throttler-port';

/**
 * Builds a manager and returns it beside the port its composition root built: the object `attach()`
 * hands the crawler integration. Tests of what the integration drives (the origin gate, wake-ups,
 * robots.txt verdicts) call the port, as the integration does, instead of members on the manager.
 */
export function withPort<M extends ThrottlingRequestManager>(make: () => M): { manager: M; port: ThrottlerPort } {
    const built = jest.spyOn(composition, 'assemble');
    try {
        const manager = make();
        const parts = built.mock.results.at(-1)?.value as ReturnType<typeof composition.assemble> | undefined;
        if (!parts) throw new Error('withPort: the manager was not built through assemble()');
        return { manager, port: parts.port };
    } finally {
        built.mockRestore();
    }
}
