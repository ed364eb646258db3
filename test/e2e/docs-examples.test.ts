import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { rampupPlot } from '../../docs/examples/plot';
import { main as quotas } from '../../docs/examples/quotas';
import { main as readme } from '../../docs/examples/readme';
import { main as rampup } from '../../docs/examples/rampup';
import { main as scopes } from '../../docs/examples/scopes';
import { ThrottlingRequestManager } from 'crawlee-throttling';

import { memoryConfig } from '../helpers/storage';

// The examples of docs/rampup.md, docs/scopes.md and docs/quotas.md, run as written.
describe('docs examples run', () => {
    test("the README's CheerioCrawler on defaults crawls a 5 req/s site to the end at about its rate", async () => {
        const { stats, seconds } = await readme(memoryConfig());
        console.log('README EXAMPLE', JSON.stringify({ stats, seconds }));
        expect(stats).toHaveLength(1);
        expect(stats[0]).toMatchObject({ domain: 'shop.example', handled: 60 });
        // 60 pages at 5 req/s take 12 s; the README quotes a run's figures.
        expect(stats[0]!.refused).toBeLessThanOrEqual(6);
        // The learner settles between about half the site's rate and a little over it: 4.35, 2.78, 5.71
        // and 6.32 req/s in CI runs, 4.49-4.56 in five runs on an idle machine. A low delivery sample
        // can cut it far; after a wait that refilled the burst, the reading shares the burst out at a
        // rate that is itself high by it, so the pace can end over the rate before a refusal corrects
        // it (docs/rampup.md lists both as open; why a loaded machine goes further is not traced).
        // Doubling unchecked would end near 10.
        expect(stats[0]!.learnedRate).toBeGreaterThan(2);
        expect(stats[0]!.learnedRate).toBeLessThanOrEqual(7);
    }, 90_000);

    test('rampup finds a rate near the limit with few refusals', async () => {
        const result = await rampup(memoryConfig());
        const svg = rampupPlot(result, 5);
        expect(svg).toContain('<path');
        // UPDATE_DOCS_PLOTS=1 regenerates the plot shown in docs/rampup.md from this run.
        if (process.env.UPDATE_DOCS_PLOTS) writeFileSync(join(__dirname, '../../docs/img/rampup-rate.svg'), svg);
        console.log('RAMPUP EXAMPLE', JSON.stringify({ ...result, rates: undefined, arrivals: undefined }));
        expect(result.served).toBe(40);
        expect(result.refusals / result.requests).toBeLessThanOrEqual(0.1);
        expect(result.finalRate).toBeGreaterThan(2);
        expect(result.finalRate).toBeLessThan(8);
    });

    test('a shared named scope keeps two sites to one request at a time', async () => {
        const result = await scopes(memoryConfig());
        expect(result.served).toBe(12);
        expect(result.maxInFlight).toBe(1);
    });

    test('a quota caps the spend per window', async () => {
        // Counted when the manager hands a request out, not when the server logs it: under load the
        // first batch, handed out late in a window, can reach the server in the next one.
        const handedOut = new Map<number, number>();
        const original = ThrottlingRequestManager.prototype.fetchNextRequest;
        const spy = jest
            .spyOn(ThrottlingRequestManager.prototype, 'fetchNextRequest')
            .mockImplementation(async function (this: ThrottlingRequestManager, ...args: Parameters<typeof original>) {
                const request = await original.apply(this, args);
                if (request) {
                    const window = Math.floor(Date.now() / 2000);
                    handedOut.set(window, (handedOut.get(window) ?? 0) + 1);
                }
                return request;
            });
        try {
            const result = await quotas(memoryConfig());
            expect(result.served).toBe(12);
            expect([...handedOut.values()].reduce((a, b) => a + b, 0)).toBe(12);
            for (const count of handedOut.values()) expect(count).toBeLessThanOrEqual(3);
            // 12 requests at 3 a window need at least 4 windows.
            expect(handedOut.size).toBeGreaterThanOrEqual(4);
        } finally {
            spy.mockRestore();
        }
    });
});
