import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { rampupPlot } from '../../docs/examples/plot';
import { main as quotas } from '../../docs/examples/quotas';
import { main as rampup } from '../../docs/examples/rampup';
import { main as scopes } from '../../docs/examples/scopes';
import { memoryConfig } from '../helpers/storage';

// The examples of docs/rampup.md, docs/scopes.md and docs/quotas.md, run as written.
describe('docs examples run', () => {
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
        const result = await quotas(memoryConfig());
        expect(result.served).toBe(12);
        for (const count of result.perWindow) expect(count).toBeLessThanOrEqual(3);
    });
});
