import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { runDemo } from '../../packages/demo/src';

describe('demo (smoke)', () => {
    let dir: string;
    beforeAll(() => {
        dir = mkdtempSync(join(tmpdir(), 'demo-smoke-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    test('crawls 2 small sites with and without the throttler and writes a self-contained HTML report', async () => {
        let printed = '';
        const result = await runDemo({
            sites: 2,
            pages: 5,
            quiet: true,
            out: dir,
            stdout: { write: (text: string) => (printed += text) },
        });

        expect(result.reportPath).toBe(join(dir, 'index.html'));
        expect(existsSync(result.reportPath)).toBe(true);
        expect(printed).toContain(`Report: ${result.reportPath}`);
        expect(printed).toContain('Summary');

        const html = readFileSync(result.reportPath, 'utf8');
        const hosts = ['site-1.example', 'site-2.example'];
        for (const crawl of ['throttled', 'baseline']) {
            for (const host of hosts) {
                expect(html).toContain(`<svg class="timeline" data-crawl="${crawl}" data-domain="${host}"`);
            }
        }
        // Self-contained: no external scripts, stylesheets or images.
        expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+stylesheet|<img[^>]+src="http/);

        // The throttled crawl reached every page of both sites (6 each, `/` included); the baseline ran too.
        expect(result.throttled.figures.total.pagesTotal).toBe(12);
        expect(result.throttled.figures.total.pages).toBe(12);
        expect(result.baseline?.run.entries.length).toBeGreaterThan(0);
    }, 120_000);
});
