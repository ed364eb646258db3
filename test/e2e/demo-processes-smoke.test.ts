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

describeRedis(
    'demo with 3 processes sharing one frontier and one RedisDomainClock (smoke; needs npm run build)',
    () => {
        let dir: string;
        beforeAll(() => {
            dir = mkdtempSync(join(tmpdir(), 'demo-processes-'));
        });
        afterAll(() => rmSync(dir, { recursive: true, force: true }));

        test('crawls every page once with 3 processes on one frontier, and the report marks which process crawled it', async () => {
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
            // One frontier: every process started from all 12 pages, and each page was crawled once.
            expect(pages.map((e) => `${e.site}${e.path}`).sort()).toEqual(
                [...new Set(pages.map((e) => `${e.site}${e.path}`))].sort(),
            );
            expect(pages).toHaveLength(12);
            expect(new Set(pages.map((e) => e.client)).size).toBeGreaterThan(1);
            expect(printed).toMatch(
                /3 CheerioCrawler processes \+ ThrottlingRequestManager, sharing one frontier \(RedisStorageClient\) and one RedisDomainClock/,
            );
            const split = /total .* p1 (\d+) · p2 (\d+) · p3 (\d+)/.exec(printed);
            expect(split && Number(split[1]) + Number(split[2]) + Number(split[3])).toBe(12);

            const html = readFileSync(result.reportPath, 'utf8');
            for (const p of new Set(pages.map((e) => e.client))) expect(html).toContain(`data-process="${p}"`);
            expect(html).toMatch(/sent by process [123]/);
            expect(html).toContain('3 processes, one frontier and one RedisDomainClock');
        }, 120_000);
    },
);
