import type * as IORedis from 'ioredis';

import { MissingRedisDriverError } from '../core/errors';

export { MissingRedisDriverError } from '../core/errors';

/**
 * Loads ioredis when a Redis class first needs a connection, not when the package is imported:
 * `crawlee-throttling` itself works without ioredis, and only the Redis features ask for it.
 */
export function loadIoredis(): typeof IORedis {
    try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        return require('ioredis') as typeof IORedis;
    } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') throw error;
        throw new MissingRedisDriverError(
            'crawlee-throttling/redis needs the ioredis package, which is not installed: run `npm install ioredis` ' +
                '(an optional peer dependency, version 5).',
        );
    }
}
