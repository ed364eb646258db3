import { randomBytes } from 'node:crypto';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import { runFleet } from './packages/bench/dist/fleet-run.js';
const procs = (process.env.P ?? '1,2,4').split(',').map(Number);
const reps = Number(process.env.R ?? 1);
const oracle = !!process.env.ORACLE;
const sites = Array.from({ length: 4 }, (_, i) => ({ host: `site-${i}.example`, rate: 5, burst: 1, pages: 80 }));
for (const processes of procs)
    for (let r = 0; r < reps; r++) {
        const web = await startPoliteWeb({ sites });
        try {
            const run = await runFleet({
                web,
                pages: 80,
                processes,
                maxConcurrency: 4,
                startInMs: 5000,
                timeoutMs: 300000,
                redis: { url: 'redis://127.0.0.1:6379', keyPrefix: `adhoc:${randomBytes(4).toString('hex')}:` },
                ...(oracle ? { delaySecs: 1 / (0.95 * 5), noRampup: true } : {}),
            });
            const paces = run.steadyPace.filter((p) => p !== null);
            const share = paces.reduce((a, b) => a + b, 0) / paces.length / 5;
            console.log(
                `${oracle ? 'oracle' : 'learner'} procs ${processes}: steady ${(share * 100).toFixed(1)} % [${paces.map((p) => p.toFixed(2)).join(' ')}], refused ${run.refusals}/${run.requests}, makespan ${(run.makespanMs / 1000).toFixed(1)} s, handled ${run.handled}`,
            );
        } finally {
            await web.close();
        }
    }
