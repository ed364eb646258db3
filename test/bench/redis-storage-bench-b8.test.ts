import type { FrontierResultSet } from '../../packages/bench/src/frontier-bench';
import type { FrontierRun } from '../../packages/bench/src/frontier-fleet';
import { b8Section } from '../../packages/bench/src/frontier-markdown';

const run = (over: Partial<FrontierRun>): FrontierRun => ({
    processes: 1,
    storage: 'redis',
    pages: 100,
    distinctHandled: 100,
    handledTwice: 0,
    handledTwiceHeld: 0,
    pacedRequests: 100,
    pacedRefusals: 0,
    makespanMs: 10_000,
    cpuMs: 1_000,
    redisCpuMs: 200,
    redisCommands: 5_000,
    redisScripts: 1_000,
    killed: false,
    ...over,
});

const sizes = {
    processCounts: [1, 4],
    sites: 2,
    pacedSites: 1,
    pacedRate: 4,
    pages: 49,
    latencyMs: 1000,
    maxConcurrency: 10,
    lockSecs: 20,
    killProcesses: 4,
    killAfterPages: 10,
    memoryRequests: 1000,
    timeoutMs: 1000,
};

describe('B8 section', () => {
    it('marks the scaling and the pace against their targets, per run', () => {
        const result: FrontierResultSet = {
            redisUrl: 'redis://x',
            sizes,
            runs: [
                run({ storage: 'memory', cpuMs: 500 }),
                run({}),
                run({ processes: 4, makespanMs: 3_000, pacedRefusals: 2 }),
                run({ processes: 4, killed: true, handledTwice: 3, handledTwiceHeld: 3 }),
            ],
            memory: { requests: 1000, pendingBytesPerRequest: 400, handledBytesPerRequest: 300 },
        };
        const md = b8Section(result);
        // 100 pages in 3 s against 100 in 10 s: 3.33x, over the 3.2x target.
        expect(md).toMatch(/4 processes: 3\.33x the pages\/s of 1 \(target ≥ 3\.2x\) ✅/);
        // 2 of 100 refused on the paced sites is over the 1 % target.
        expect(md).toMatch(/\| 4 on one Redis \| 100 \/ 100 \| 0 \| 2\.0 % ❌ \|/);
        expect(md).toMatch(
            /\| 4 on one Redis, one SIGKILLed \| 100 \/ 100 \| 3 \(3 held by the killed one\) \| 0\.0 % ✅ \|/,
        );
        // Crawler CPU per page: 10 ms on Redis against 5 on memory-storage.
        expect(md).toMatch(/crawler CPU 2\.00x, plus Redis's own 2\.00 ms/);
        expect(md).toMatch(/400 bytes per pending request \(381 MiB per million\)/);
    });

    it('says why it was skipped', () => {
        expect(b8Section({ redisUrl: 'redis://x', sizes, runs: [], skipped: 'no Redis' })).toMatch(
            /Skipped: no Redis\./,
        );
    });
});
