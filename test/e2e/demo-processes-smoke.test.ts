import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { DemoSetupError, runDemo } from '../../packages/demo/src';
import { REDIS_URL, describeRedis } from '../helpers/redis';

describe('demo with several processes: what it needs', () => {
    test('says clearly when no Redis answers, before starting anything', async () => {
        const run = runDemo({ processes: 3, redis: true, redisUrl: 'redis://127.0.0.1:1', quiet: true });
        await expect(run).rejects.toThrow(DemoSetupError);
        await expect(run).rejects.toThrow(/No Redis answered at redis:\/\/127\.0\.0\.1:1: --redis needs one/);
    });

    test('refuses several processes without Redis, naming the option', async () => {
        await expect(runDemo({ processes: 3, quiet: true })).rejects.toThrow(/--processes 3 needs --redis/);
    });
});

describeRedis('demo with 3 processes sharing one RedisDomainClock (smoke; needs npm run build)', () => {
    let dir: string;
    beforeAll(() => {
        dir = mkdtempSync(join(tmpdir(), 'demo-processes-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    test('crawls every page with 3 processes, and the report marks which process sent each request', async () => {
        let printed = '';
        const result = await runDemo({
            sites: 2,
            pages: 5,
            processes: 3,
            redis: true,
            redisUrl: REDIS_URL,
            baseline: false,
            quiet: true,
            out: dir,
            stdout: { write: (text: string) => (printed += text) },
        });

        expect(result.throttled.figures.total.pages).toBe(12);
        expect(result.throttled.run.requestsFailed).toBe(0);
        const pages = result.throttled.run.entries.filter((e) => e.path !== '/robots.txt');
        expect(new Set(pages.map((e) => e.client))).toEqual(new Set(['1', '2', '3']));
        expect(printed).toMatch(/3 CheerioCrawler processes \+ ThrottlingRequestManager, sharing one RedisDomainClock/);
        expect(printed).toMatch(/total .* p1 4 · p2 4 · p3 4/);

        const html = readFileSync(result.reportPath, 'utf8');
        for (const p of ['1', '2', '3']) expect(html).toContain(`data-process="${p}"`);
        expect(html).toMatch(/sent by process [123]/);
        expect(html).toContain('3 processes, one RedisDomainClock');
    }, 120_000);
});
