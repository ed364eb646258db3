import { CriticalError, NonRetryableError, RetryRequestError, SessionError } from '@crawlee/core';

import * as api from 'crawlee-throttling';
import * as redisApi from 'crawlee-throttling/redis';

import { LockFile } from '../../packages/throttling/src/shared-clock/lock-file';
import { memoryConfig } from '../helpers/storage';

// Every error a user can meet is exported, has a stable code, and extends either the package's base
// class or the Crawlee error whose handling it needs (a critical stop, a free retry, no retry, a
// session retired).
const exportedErrors = [...Object.entries(api), ...Object.entries(redisApi)].filter(
    ([name, value]) => typeof value === 'function' && name.endsWith('Error') && value.prototype instanceof Error,
) as [string, new (...args: never[]) => Error][];

const CRAWLEE_BASES = [CriticalError, RetryRequestError, NonRetryableError, SessionError];

describe("the package's errors", () => {
    test('the errors that reach users are all exported', () => {
        const names = exportedErrors.map(([name]) => name);
        for (const name of [
            'SharedClockError',
            'StorageCallTimeoutError',
            'InvalidDomainError',
            'ThrottlingError',
            'RedisStorageError',
            'MissingRedisDriverError',
        ])
            expect(names).toContain(name);
    });

    test.each(exportedErrors.filter(([name]) => name !== 'ThrottlingError'))(
        '%s has a stable ERR_THROTTLING_ code and a base it is handled by',
        (name, ErrorClass) => {
            // Codes are fields set in the constructor: read one from a real instance.
            const instance = construct(ErrorClass);
            const error = instance;
            expect(instance.name).toBe(name);
            expect((instance as { code?: unknown }).code).toMatch(/^ERR_THROTTLING_[A-Z_]+$/);
            const ownBase = error instanceof api.ThrottlingError;
            const crawleeBase = CRAWLEE_BASES.some((Base) => error instanceof Base);
            expect(ownBase || crawleeBase).toBe(true);
        },
    );

    test('misuse of the public API throws InvalidArgumentError, naming the call', async () => {
        const clock = new api.ManualClock(1_000);
        expect(() => clock.advance(-1)).toThrow(api.InvalidArgumentError);
        expect(() => clock.set(10)).toThrow(/ManualClock\.set cannot go back in time \(10 < 1000\)/);
        const manager = new api.ThrottlingRequestManager({ domains: 'all', clock }, memoryConfig());
        expect(() => manager.recordPacingSignal('http://a.test/', undefined as never)).toThrow(
            api.InvalidArgumentError,
        );
        const { Request } = await import('@crawlee/core');
        await expect(manager.markRequestHandled(new Request({ url: 'http://a.test/x' }))).rejects.toThrow(
            /was never handed out by this manager/,
        );
        await expect(manager.markRequestHandled(new Request({ url: 'http://a.test/x' }))).rejects.toMatchObject({
            code: 'ERR_THROTTLING_INVALID_ARGUMENT',
        });
    });

    test.each([
        ['a signal that is not an object', 42, /the signal must be an object, got \(number\) 42/],
        // A value whose String() throws is still described, not turned into a TypeError.
        [
            'a reason with no toString',
            { reason: Object.create(null), url: 'http://a.test/' },
            /reason \(object\) \[object Object\] is not one of/,
        ],
        [
            'an unknown reason',
            { reason: 'slowDown', url: 'http://a.test/' },
            /reason "slowDown" is not one of 'rateLimited'/,
        ],
        ['a missing url', { reason: 'rateLimited' }, /a 'rateLimited' signal needs a url string/],
        [
            'a negative wait',
            { reason: 'rateLimited', url: 'http://a.test/', waitMs: -5 },
            /waitMs must be a non-negative/,
        ],
        [
            'a missing interval',
            { reason: 'minInterval', url: 'http://a.test/' },
            /intervalMs must be a non-negative finite/,
        ],
        ['an interval that is not a number', { reason: 'minIntervalEverywhere', intervalMs: 'soon' }, /got "soon"/],
        [
            'a scope that is not a string',
            { reason: 'rateLimited', url: 'http://a.test/', scope: 3 },
            /scope must be a string/,
        ],
    ])('recordPacingSignal rejects %s with InvalidArgumentError', (_what, signal, message) => {
        const manager = new api.ThrottlingRequestManager({ domains: 'all' }, memoryConfig());
        const call = () => manager.recordPacingSignal(signal as never);
        expect(call).toThrow(api.InvalidArgumentError);
        expect(call).toThrow(message);
        // Nothing was recorded: the domain is not backed off or paced by the bad signal.
        expect(manager.snapshot()).toEqual([]);
    });

    test('a signal whose URL names no throttled domain matches nothing, without an error', () => {
        const manager = new api.ThrottlingRequestManager({ domains: 'all' }, memoryConfig());
        expect(manager.recordPacingSignal({ reason: 'rateLimited', url: 'not a url' })).toBe(false);
    });

    test("the file clock's lock held past its time limit fails with SharedClockError", () => {
        const clock = new api.ManualClock(0);
        const busy = Object.assign(new Error('exists'), { code: 'EEXIST' });
        const lock = new LockFile({
            timeoutMs: 5,
            staleMs: 60_000,
            clock,
            fs: {
                createExclusive: () => {
                    throw busy;
                },
                // Fresh every time it is looked at: never stale, so never broken.
                stat: () => ({ dev: 1, ino: 1, mtimeMs: clock.now() }),
                unlink: () => undefined,
            },
        });
        const attempt = () => lock.acquire('/tmp/clock.lock', 'the clock of a.com');
        expect(attempt).toThrow(api.SharedClockError);
        expect(attempt).toThrow(/the clock of a\.com \(\/tmp\/clock\.lock\) was held for more than 5 ms/);
    });
});

/** An instance built with arguments of the shapes the constructors take. */
function construct(ErrorClass: new (...args: never[]) => Error): Error {
    const attempts: unknown[][] = [['reason'], [1, ['a.com']], ['a.com', 'reason'], [[], 'reason'], [{}]];
    for (const args of attempts) {
        try {
            return new (ErrorClass as unknown as new (...a: unknown[]) => Error)(...args);
        } catch {
            // Try the next shape.
        }
    }
    throw new Error(`cannot construct ${ErrorClass.name}`);
}
