import { createRequire } from 'node:module';

import { CrawleeShapeError } from './errors';

/** The installed @crawlee/core version, for error messages ('unknown' when it cannot be read). */
export function installedCrawleeVersion(): string {
    try {
        const load = createRequire(__filename);
        return (load('@crawlee/core/package.json') as { version?: string }).version ?? 'unknown';
    } catch {
        return 'unknown';
    }
}

/**
 * Checks that `target[key]` is a function before it is patched; throws {@link CrawleeShapeError} naming
 * `member` (e.g. `Session.markBad`) and the Crawlee version otherwise.
 */
export function assertPatchable(target: unknown, key: string, member: string): void {
    const value = (target as Record<string, unknown> | null | undefined)?.[key];
    if (typeof value === 'function') return;
    throw new CrawleeShapeError(member, installedCrawleeVersion(), value === undefined ? 'nothing' : typeof value);
}
