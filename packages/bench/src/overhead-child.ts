/**
 * One B3 measurement in a fresh process (forked by overhead.ts with `--expose-gc`): warms the store's
 * code paths up on a small run, measures the spec given as JSON in argv[2], and sends the result to
 * the parent over IPC.
 */
import { log, LogLevel } from '@crawlee/core';

import { measure, type MeasureSpec } from './overhead-measure';

async function main(): Promise<void> {
    log.setLevel(LogLevel.ERROR);
    const spec = JSON.parse(process.argv[2]) as MeasureSpec;
    if (typeof (globalThis as { gc?: unknown }).gc !== 'function')
        throw new Error('overhead-child needs --expose-gc: its heap figures are read after full GCs');
    // So the measured run does not pay for JIT compilation; what the warm-up keeps is in the baseline.
    await measure({ ...spec, domains: 10, requests: Math.min(1000, spec.requests), batch: undefined });
    const result = await measure(spec);
    await new Promise<void>((resolve, reject) =>
        process.send!({ result }, (error: Error | null) => (error ? reject(error) : resolve())),
    );
}

main().then(
    () => process.exit(0),
    (error: unknown) => {
        process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
        process.exit(1);
    },
);
