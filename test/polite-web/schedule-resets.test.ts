import { request } from 'node:http';
import { startPoliteWeb, type PoliteWeb, type SiteOptions } from '@crawlee-throttling/polite-web';
import { get, manualClock } from './http-helpers';

import { seededRandom } from '../../packages/polite-web/src/seeded-random';

/** How one request ended: the status if headers arrived, the body bytes read, and the error if it broke. */
interface Outcome {
    status?: number;
    bytes: number;
    error?: string;
}

function fetchOutcome(web: PoliteWeb, host: string, path: string): Promise<Outcome> {
    return new Promise((resolve) => {
        const outcome: Outcome = { bytes: 0 };
        const fail = (error: NodeJS.ErrnoException) => resolve({ ...outcome, error: error.code ?? error.message });
        const req = request(
            { host: '127.0.0.1', port: web.port, path: `http://${host}${path}`, headers: { host }, agent: false },
            (res) => {
                outcome.status = res.statusCode;
                res.on('data', (chunk: Buffer) => (outcome.bytes += chunk.length));
                res.on('end', () => resolve(outcome));
                res.on('error', fail);
            },
        );
        req.on('error', fail);
        req.end();
    });
}

describe('polite-web rate-limit schedule', () => {
    const clock = manualClock();
    let web: PoliteWeb;

    async function withSites(sites: SiteOptions[]): Promise<PoliteWeb> {
        await web?.close();
        web = await startPoliteWeb({ sites, clock: clock.now });
        return web;
    }
    afterAll(() => web?.close());

    const statuses = async (n: number) => {
        const out: number[] = [];
        for (let i = 0; i < n; i += 1) out.push((await get(web, 'a.example', `/page/${i % 5}`)).status);
        return out;
    };

    it('limits in the "on" spells only, without quota headers in the "off" spells', async () => {
        await withSites([
            {
                host: 'a.example',
                rate: 2,
                burst: 1,
                refusal: { status: 429, rateLimitHeaders: 'ietf' },
                rateLimitSchedule: { onMs: 1_000, offMs: 2_000 },
            },
        ]);
        expect(await statuses(2)).toEqual([200, 429]);
        clock.advance(999);
        expect(await statuses(1)).toEqual([200]); // refilled, still on: one token
        expect(await statuses(1)).toEqual([429]);
        clock.advance(1); // 1 000 ms: off
        expect(await statuses(6)).toEqual([200, 200, 200, 200, 200, 200]);
        expect((await get(web, 'a.example', '/')).headers.ratelimit).toBeUndefined();
        clock.advance(1_999); // 2 999 ms: still off
        expect(await statuses(3)).toEqual([200, 200, 200]);
        clock.advance(1); // 3 000 ms: on again, the bucket refilled while the limit was off
        expect(await statuses(2)).toEqual([200, 429]);
        expect((await get(web, 'a.example', '/')).headers.ratelimit).toBeDefined();
    });

    it('starts phaseMs into the cycle', async () => {
        await withSites([
            { host: 'a.example', rate: 1, burst: 1, rateLimitSchedule: { onMs: 1_000, offMs: 1_000, phaseMs: 1_500 } },
        ]);
        expect(await statuses(4)).toEqual([200, 200, 200, 200]); // 1 500 ms into the cycle: off
        clock.advance(500);
        expect(await statuses(2)).toEqual([200, 429]);
    });

    it('restarts the schedule on reset()', async () => {
        await withSites([{ host: 'a.example', rate: 1, burst: 1, rateLimitSchedule: { onMs: 1_000, offMs: 1_000 } }]);
        clock.advance(1_200);
        expect(await statuses(3)).toEqual([200, 200, 200]);
        web.reset();
        expect(await statuses(2)).toEqual([200, 429]);
    });

    it('rejects a schedule without a rate and non-positive or non-finite spells, naming the option', async () => {
        const site = (extra: Partial<SiteOptions>): SiteOptions[] => [{ host: 'a.example', ...extra }];
        const schedule = { onMs: 1_000, offMs: 1_000 };
        await expect(startPoliteWeb({ sites: site({ rateLimitSchedule: schedule }) })).rejects.toThrow(
            'site a.example: rateLimitSchedule needs a rate',
        );
        await expect(
            startPoliteWeb({ sites: site({ rate: 1, rateLimitSchedule: { ...schedule, onMs: 0 } }) }),
        ).rejects.toThrow('rateLimitSchedule.onMs must be a finite number > 0, got 0');
        await expect(
            startPoliteWeb({ sites: site({ rate: 1, rateLimitSchedule: { ...schedule, offMs: NaN } }) }),
        ).rejects.toThrow('rateLimitSchedule.offMs must be a finite number > 0, got NaN');
        await expect(
            startPoliteWeb({ sites: site({ rate: 1, rateLimitSchedule: { ...schedule, phaseMs: -1 } }) }),
        ).rejects.toThrow('rateLimitSchedule.phaseMs must be a finite number >= 0, got -1');
    });
});

describe('polite-web connection resets', () => {
    let web: PoliteWeb | undefined;
    afterEach(async () => {
        await web?.close();
        web = undefined;
    });

    it('cuts page responses off after the headers and half the body, and logs them as resets', async () => {
        web = await startPoliteWeb({ sites: [{ host: 'a.example', connectionResets: { share: 1 } }] });
        const whole = (await startPoliteWeb({ sites: [{ host: 'a.example' }] }).then(async (plain) => {
            const res = await get(plain, 'a.example', '/page/1');
            await plain.close();
            return Buffer.byteLength(res.body);
        })) as number;

        const cut = await fetchOutcome(web, 'a.example', '/page/1');
        expect(cut.status).toBe(200);
        expect(cut.error).toBe('ECONNRESET');
        expect(cut.bytes).toBeLessThan(whole);
        // robots.txt is never cut: crawlers need it to start.
        expect(await fetchOutcome(web, 'a.example', '/robots.txt')).toEqual({ status: 200, bytes: expect.any(Number) });

        expect(web.log.map((e) => [e.path, e.status, e.reset])).toEqual([
            ['/page/1', 200, true],
            ['/robots.txt', 200, undefined],
        ]);
        const score = web.score();
        expect(score.totals).toMatchObject({ requests: 1, served: 0, resets: 1 });
    });

    it('never cuts refusals', async () => {
        web = await startPoliteWeb({
            sites: [{ host: 'a.example', rate: 0.001, burst: 1, connectionResets: { share: 1 } }],
        });
        expect((await fetchOutcome(web, 'a.example', '/')).error).toBe('ECONNRESET');
        expect(await fetchOutcome(web, 'a.example', '/')).toEqual({ status: 429, bytes: expect.any(Number) });
    });

    it('picks the same responses for the same seed, others for another seed, and starts over on reset()', async () => {
        const pattern = async (seed: number): Promise<boolean[]> => {
            const w = await startPoliteWeb({ sites: [{ host: 'a.example', connectionResets: { share: 0.3, seed } }] });
            const run = async () => {
                const out: boolean[] = [];
                for (let i = 0; i < 40; i += 1) out.push((await fetchOutcome(w, 'a.example', '/')).error !== undefined);
                return out;
            };
            const first = await run();
            w.reset();
            expect(await run()).toEqual(first);
            await w.close();
            return first;
        };
        const seven = await pattern(7);
        expect(await pattern(7)).toEqual(seven);
        expect(await pattern(8)).not.toEqual(seven);
        const cutCount = seven.filter(Boolean).length;
        expect(cutCount).toBeGreaterThan(0);
        expect(cutCount).toBeLessThan(40);
    });

    it('rejects a share outside [0, 1] and a fractional seed, naming the option', async () => {
        const site = (connectionResets: { share: number; seed?: number }): SiteOptions[] => [
            { host: 'a.example', connectionResets },
        ];
        await expect(startPoliteWeb({ sites: site({ share: 1.5 }) })).rejects.toThrow(
            'site a.example: connectionResets.share must be a number in [0, 1], got 1.5',
        );
        await expect(startPoliteWeb({ sites: site({ share: NaN }) })).rejects.toThrow('connectionResets.share');
        await expect(startPoliteWeb({ sites: site({ share: 0.1, seed: 1.5 }) })).rejects.toThrow(
            'connectionResets.seed must be an integer, got 1.5',
        );
    });
});

describe('seededRandom (polite-web)', () => {
    it('gives numbers in [0, 1), the same sequence for the same seed, and a usable sequence for seed 0', () => {
        for (const seed of [0, 1, 42, 2 ** 31]) {
            const a = seededRandom(seed);
            const b = seededRandom(seed);
            const values = Array.from({ length: 1_000 }, () => a());
            expect(values).toEqual(Array.from({ length: 1_000 }, () => b()));
            expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
            expect(new Set(values).size).toBeGreaterThan(990);
            const mean = values.reduce((s, v) => s + v, 0) / values.length;
            expect(mean).toBeGreaterThan(0.45);
            expect(mean).toBeLessThan(0.55);
        }
    });
});
