/**
 * One name per option: the backoff bounds take Crawlee v4's names everywhere, a quota window is
 * `quotaWindowSecs` (the learner's window stays `rampup.windowSecs`), and `stateStore` is gone. A
 * crawl still passing an old name gets an error naming the one to use.
 */
import { ThrottlingOptionsError, ThrottlingRequestManager } from 'crawlee-throttling';

const make = (options: object) => () => new ThrottlingRequestManager({ domains: 'all', ...options } as never);

describe('renamed and removed options', () => {
    test.each([
        [{ backoffMinDelaySecs: 1 }, /`backoffMinDelaySecs` is now `baseDelaySecs`/],
        [{ backoffMaxDelaySecs: 9 }, /`backoffMaxDelaySecs` is now `maxDelaySecs`/],
        [{ windowSecs: 60 }, /`windowSecs` is now `quotaWindowSecs`/],
        [{ stateStore: {} }, /`stateStore` is now gone: domain states are internal/],
        [
            { scopes: { 'a.com': { quota: 3, windowSecs: 10 } } },
            /in `scopes.a.com`.*`windowSecs` is now `quotaWindowSecs`/,
        ],
    ])('%j is refused with the name to use', (options, message) => {
        expect(make(options)).toThrow(ThrottlingOptionsError);
        expect(make(options)).toThrow(message);
    });

    test('a scope takes the v4 names of the backoff bounds, checked against each other', () => {
        expect(make({ scopes: { 'a.com': { baseDelaySecs: 1, maxDelaySecs: 5 } } })).not.toThrow();
        expect(make({ scopes: { 'a.com': { baseDelaySecs: 9, maxDelaySecs: 5 } } })).toThrow(
            /in scope `a.com`, baseDelaySecs \(9\) must not exceed maxDelaySecs \(5\)/,
        );
    });

    test('quotaWindowSecs sets the quota window; rampup.windowSecs stays the learner’s', () => {
        const manager = new ThrottlingRequestManager({
            domains: 'all',
            rampup: { windowSecs: 2 },
            scopes: { 'a.com': { quota: 3, quotaWindowSecs: 10 } },
        });
        expect(manager.policyOf('a.com').quota).toEqual({ limit: 3, windowMs: 10_000 });
        expect(manager.policyOf('a.com').rampup?.windowMs).toBe(2000);
    });

    test('scope backoff bounds resolve from the v4 names', () => {
        const manager = new ThrottlingRequestManager({
            domains: 'all',
            baseDelaySecs: 3,
            scopes: { 'a.com': { maxDelaySecs: 30 } },
        });
        expect(manager.policyOf('a.com')).toMatchObject({ backoffMinDelayMs: 3000, backoffMaxDelayMs: 30_000 });
        expect(manager.policyOf('b.com')).toMatchObject({ backoffMinDelayMs: 3000, backoffMaxDelayMs: 60_000 });
    });
});
