/**
 * The Crawlee members this package patches (Session.markBad, Statistics.calculate) are checked before
 * they are patched: a Crawlee that changed their shape fails at once, naming the member and the
 * installed Crawlee version, instead of quietly crawling without them.
 */
import { Session, SessionPool } from '@crawlee/core';
import { BasicCrawler } from '@crawlee/basic';
import { CrawleeShapeError, ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';

import type { AttachableCrawler } from 'crawlee-throttling/types';
import { assertPatchable, installedCrawleeVersion } from '../../packages/throttling/src/core/crawlee-shape';
import { spareSessionOnce } from '../../packages/throttling/src/orchestration/response-interpreter';
import { memoryConfig } from '../helpers/storage';

const VERSION = installedCrawleeVersion();

function manager() {
    return new ThrottlingRequestManager({ domains: ['a.com'], clock: new ManualClock() }, memoryConfig());
}

describe('guards on patched Crawlee members', () => {
    test('the installed Crawlee version is read (for the message)', () => {
        expect(VERSION).toMatch(/^3\.\d+\.\d+/);
    });

    test('assertPatchable passes a method and names member, version and what was found otherwise', () => {
        expect(() => assertPatchable({ calculate: () => ({}) }, 'calculate', 'Statistics.calculate')).not.toThrow();
        let error: unknown;
        try {
            assertPatchable({ calculate: 42 }, 'calculate', 'Statistics.calculate');
        } catch (e) {
            error = e;
        }
        expect(error).toBeInstanceOf(CrawleeShapeError);
        expect(error).toMatchObject({
            code: 'ERR_THROTTLING_CRAWLEE_SHAPE',
            member: 'Statistics.calculate',
            crawleeVersion: VERSION,
        });
        expect((error as Error).message).toContain(`Crawlee ${VERSION}`);
        expect((error as Error).message).toContain('found number');
    });

    test('a real crawler attaches: both members are where the patches expect them', () => {
        const throttler = manager();
        const crawler = new BasicCrawler({ requestQueue: throttler.asRequestQueue(), requestHandler: async () => {} });
        expect(() => throttler.attach(crawler)).not.toThrow();
        expect(typeof Session.prototype.markBad).toBe('function');
    });

    test('attach() refuses a crawler whose Statistics.calculate is gone, and installs nothing', () => {
        const throttler = manager();
        const crawler: AttachableCrawler = {
            requestQueue: throttler,
            preNavigationHooks: [],
            postNavigationHooks: [],
            stats: { toJSON: () => ({}) } as never,
        };
        expect(() => throttler.attach(crawler)).toThrow(CrawleeShapeError);
        expect(() => throttler.attach(crawler)).toThrow(/Statistics\.calculate.*Crawlee 3\./s);
        expect(crawler.postNavigationHooks).toEqual([]);
    });

    test('attach() refuses when Session.markBad is not a method any more', () => {
        const original = Session.prototype.markBad;
        try {
            (Session.prototype as { markBad?: unknown }).markBad = undefined;
            const throttler = manager();
            const crawler: AttachableCrawler = {
                requestQueue: throttler,
                preNavigationHooks: [],
                postNavigationHooks: [],
            };
            expect(() => throttler.attach(crawler)).toThrow(/Session\.markBad.*found nothing/s);
        } finally {
            Session.prototype.markBad = original;
        }
    });

    test('sparing a session checks its markBad first; a real session is spared once', () => {
        expect(() => spareSessionOnce({ retire() {} } as unknown as Session)).toThrow(CrawleeShapeError);
        const session = new Session({ sessionPool: new SessionPool() });
        const before = session.errorScore;
        spareSessionOnce(session);
        session.markBad();
        expect(session.errorScore).toBe(before);
        session.markBad();
        expect(session.errorScore).toBeGreaterThan(before);
    });
});
