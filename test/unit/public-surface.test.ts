import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import * as main from 'crawlee-throttling';
import { ThrottlingRequestManager } from 'crawlee-throttling';
import * as types from 'crawlee-throttling/types';

const root = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** The names an entry file exports, types included, in the order written. */
function exportedNames(path: string): string[] {
    const names: string[] = [];
    for (const [, list] of read(path).matchAll(/export (?:type )?\{([^}]*)\}/g))
        names.push(
            ...list
                .split(',')
                .map((n) => n.trim())
                .filter(Boolean),
        );
    return names;
}

/** The façade's members, as docs/options.md lists them ("Methods"): everything else is internal. */
const DOCUMENTED_MEMBERS = [
    // setup and integration
    'asRequestQueue',
    'attach',
    'handleResponse',
    'checkReachable',
    'recordPacingSignal',
    'markThrottledRetry',
    'scopesOf',
    'updateScope',
    'reportCost',
    'on',
    'off',
    // inspection
    'checkReadiness',
    'readiness',
    'floorIntervalMs',
    'domainKeyOf',
    'isThrottled',
    'policyOf',
    'innerManager',
    'stats',
    'snapshot',
    // IRequestManager
    'addRequest',
    'addRequestsBatched',
    'fetchNextRequest',
    'markRequestHandled',
    'reclaimRequest',
    'isEmpty',
    'isFinished',
    'handledCount',
    'getTotalCount',
    'getPendingCount',
    'internalTimeoutMillis',
    'requestLockSecs',
    // storage
    'persistState',
    'purge',
    'drop',
];
// TypeScript-private methods still sit on the prototype; the compiler keeps callers out.
const PRIVATE_MEMBERS = ['constructor', 'ensureInitialized'];

describe('the public surface', () => {
    test('the façade has the documented members and nothing else (no @internal member comes back)', () => {
        const members = Object.getOwnPropertyNames(ThrottlingRequestManager.prototype).filter(
            (name) => !PRIVATE_MEMBERS.includes(name),
        );
        expect([...members].sort()).toEqual([...DOCUMENTED_MEMBERS].sort());
        expect(Object.getOwnPropertySymbols(ThrottlingRequestManager.prototype)).toEqual([Symbol.asyncIterator]);
        expect(read('packages/throttling/src/throttling-request-manager.ts')).not.toContain('@internal');
    });

    test('every member of the façade is documented in docs/options.md', () => {
        const options = read('docs/options.md');
        const methods = options.slice(options.indexOf('## Methods'), options.indexOf('## Errors'));
        const undocumented = DOCUMENTED_MEMBERS.filter((name) => !methods.includes(`\`${name}`));
        expect(undocumented).toEqual([]);
    });

    test('index.ts exports at most 40 names, grouped, none of them internal', () => {
        const names = exportedNames('packages/throttling/src/index.ts');
        expect(names.length).toBeLessThanOrEqual(40);
        expect(new Set(names).size).toBe(names.length);
        const groups = [...read('packages/throttling/src/index.ts').matchAll(/^\/\/ ---- (.+) ----$/gm)].map(
            (m) => m[1],
        );
        expect(groups).toEqual([
            'The manager',
            'Options, and the types of what the manager takes, answers and emits',
            'Errors (every one extends ThrottlingError and has a stable `code`)',
            'Shared clocks (several processes; Redis: crawlee-throttling/redis)',
            'Helpers',
        ]);
        for (const internal of ['DomainState', 'throttlingOptionsSchema', 'decideReservation', 'RedisClockKeys'])
            expect(names).not.toContain(internal);
    });

    test('the main entry carries the values; crawlee-throttling/types carries types only', () => {
        expect(Object.keys(main).sort()).toEqual(
            [
                'ThrottlingRequestManager',
                'ThrottlingError',
                'ThrottlingOptionsError',
                'ThrottledDomainLimitError',
                'ThrottledRetriesExhaustedError',
                'PersistentRateLimitError',
                'RequestThrottledError',
                'RequestBlockedError',
                'DomainUnreachableError',
                'CrawlDelayTooLongError',
                'RobotsUnreachableError',
                'InvalidDomainError',
                'InvalidArgumentError',
                'SharedClockError',
                'StorageCallTimeoutError',
                'CrawleeShapeError',
                'FileDomainClock',
                'ManualClock',
                'systemClock',
                'seededRandom',
                'DEFAULT_BACKOFF_STATUS_CODES',
                'parseRetryAfter',
                'parseRateLimitHeaders',
            ].sort(),
        );
        expect(Object.keys(types)).toEqual([]);
        const typeNames = exportedNames('packages/throttling/src/types.ts');
        // The main entry's own names are not repeated there, but for the clock interface itself.
        expect(typeNames.filter((n) => exportedNames('packages/throttling/src/index.ts').includes(n))).toEqual([
            'SharedDomainClock',
        ]);
    });
});
