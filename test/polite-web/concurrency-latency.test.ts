import { startPoliteWeb, type PoliteWeb } from '@crawlee-throttling/polite-web';
import { eventually, get } from './http-helpers';

describe('polite-web latency and concurrency', () => {
    let web: PoliteWeb;

    beforeAll(async () => {
        web = await startPoliteWeb({
            sites: [
                { host: 'slow.example', latencyMs: 60 },
                { host: 'busy.example', latencyMs: 300, maxConcurrent: 2, refusal: { status: 503 } },
                // Long enough that five requests (or a page and robots.txt) overlap on a loaded machine.
                { host: 'open.example', latencyMs: 1500 },
            ],
        });
    });
    afterAll(() => web.close());
    beforeEach(() => web.resetLog());

    it('delays responses by latencyMs', async () => {
        const started = performance.now();
        const res = await get(web, 'slow.example', '/page/0');
        expect(res.status).toBe(200);
        // Timers may fire a little late, never much early.
        expect(performance.now() - started).toBeGreaterThanOrEqual(58);
    });

    it('refuses requests beyond maxConcurrent with the refusal status, immediately', async () => {
        const started = performance.now();
        const results = await Promise.all(
            [0, 1, 2, 3].map(async (i) => {
                const res = await get(web, 'busy.example', `/page/${i}`);
                return { status: res.status, retryAfter: res.headers['retry-after'], ms: performance.now() - started };
            }),
        );
        expect(results.map((r) => r.status).sort()).toEqual([200, 200, 503, 503]);
        const refused = results.filter((r) => r.status === 503);
        expect(refused.every((r) => r.retryAfter === '1')).toBe(true);
        expect(Math.max(...refused.map((r) => r.ms))).toBeLessThan(250);

        const entries = web.log.filter((e) => e.site === 'busy.example');
        expect(entries).toHaveLength(4);
        for (const entry of entries) {
            if (entry.status === 503) expect(entry.inFlightAtArrival).toBeGreaterThan(2);
            else expect(entry.inFlightAtArrival).toBeLessThanOrEqual(2);
        }
        expect(web.maxInFlight('busy.example')).toBeGreaterThanOrEqual(3);
        expect(web.score().sites.find((s) => s.host === 'busy.example')?.maxInFlight).toBeGreaterThanOrEqual(3);
        await eventually(() => web.inFlight('busy.example') === 0);
    });

    it('counts in-flight requests server-side and records the maximum', async () => {
        const pending = [0, 1, 2, 3, 4].map((i) => get(web, 'open.example', `/page/${i}`));
        await eventually(() => web.inFlight('open.example') === 5);
        expect(web.maxInFlight('open.example')).toBe(5);
        await Promise.all(pending);
        await eventually(() => web.inFlight('open.example') === 0);
        expect(web.maxInFlight('open.example')).toBe(5);
        expect(web.log.map((e) => e.inFlightAtArrival).sort()).toEqual([1, 2, 3, 4, 5]);
        web.resetLog();
        expect(web.maxInFlight('open.example')).toBe(0);
    });

    it('does not count robots.txt as in flight', async () => {
        const pending = get(web, 'open.example', '/page/0');
        await eventually(() => web.inFlight('open.example') === 1);
        const robots = get(web, 'open.example', '/robots.txt');
        await eventually(() => web.log.length === 2);
        expect(web.inFlight('open.example')).toBe(1);
        await Promise.all([pending, robots]);
        expect(web.log[1]).toMatchObject({ path: '/robots.txt', inFlightAtArrival: 1 });
    });

    it('close() does not wait for delayed responses', async () => {
        const local = await startPoliteWeb({ sites: [{ host: 'x.example', latencyMs: 10_000 }] });
        const pending = get(local, 'x.example', '/');
        pending.catch(() => undefined);
        await eventually(() => local.inFlight('x.example') === 1);
        const started = performance.now();
        await local.close();
        expect(performance.now() - started).toBeLessThan(1_000);
        // The client sees its connection dropped rather than waiting out the latency.
        await expect(pending).rejects.toHaveProperty('message');
    });
});
