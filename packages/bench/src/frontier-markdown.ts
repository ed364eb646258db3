import { TOLD_RATE_SHARE } from './frontier-bench';
import type { FrontierResultSet } from './frontier-bench';
import type { FrontierRun } from './frontier-fleet';
import { idealMakespanMs } from './frontier-ideal';
import { mdTable } from './markdown';

/** Targets of B8: the pace holds on known paces, and 4 processes crawl at least 3.2x as fast as 1. */
export const B8_TARGETS = { maxRefusedShare: 0.01, speedup4over1: 3.2 } as const;

const mark = (ok: boolean) => (ok ? '✅' : '❌');
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const rate = (r: FrontierRun) => (r.makespanMs > 0 ? (r.distinctHandled * 1000) / r.makespanMs : 0);
const refused = (r: FrontierRun) => (r.pacedRequests ? r.pacedRefusals / r.pacedRequests : 0);
const perPage = (x: number, r: FrontierRun) => (r.distinctHandled ? x / r.distinctHandled : 0);

function label(r: FrontierRun): string {
    if (r.storage === 'memory') return `${r.processes} (memory-storage, baseline)`;
    return `${r.processes} on one Redis${r.killed ? ', one SIGKILLed' : ''}`;
}

/** The B8 section of docs/benchmarks.md. */
export function b8Section(result: FrontierResultSet): string {
    const s = result.sizes;
    const intro = [
        '## B8: crawler processes on one shared frontier (RedisStorageClient)',
        '',
        `${s.sites} sites × ${s.pages + 1} pages (a link graph: \`/\` → \`/page/0\`, \`/page/N\` → \`N+1\`, \`2N+1\`, and each site's`,
        `pages link the next site's root), every response after ${s.latencyMs} ms; the first ${s.pacedSites} sites allow`,
        `${s.pacedRate} requests/s (burst 1) and the throttler is told ${TOLD_RATE_SHARE * 100} % of that, as B5's oracle is (known paces); the rest are free. Every process starts`,
        `from all the roots, follows links, runs ${s.maxConcurrency} requests at once throughout, and shares the frontier`,
        `(every storage on Redis) and the clock (RedisDomainClock, concurrency slots included: a free site takes`,
        `${s.maxConcurrency} at once over all processes) with the others; locks last ${s.lockSecs} s.`,
    ].join('\n');
    if (result.skipped) return `${intro}\n\nSkipped: ${result.skipped}.`;
    const memoryRun = result.runs.find((r) => r.storage === 'memory');
    const one = result.runs.find((r) => r.storage === 'redis' && r.processes === 1 && !r.killed);
    const baseRate = one ? rate(one) : 0;
    const ideal = (processes: number) => {
        const ms = idealMakespanMs({
            ...s,
            pacedRate: TOLD_RATE_SHARE * s.pacedRate,
            slots: processes * s.maxConcurrency,
            siteSlots: s.maxConcurrency,
            pacedConcurrency: Math.ceil((s.latencyMs / 1000) * s.pacedRate) + 1,
        });
        return ms > 0 ? (s.sites * (s.pages + 1) * 1000) / ms : 0;
    };
    const rows = result.runs.map((r) => [
        label(r),
        `${r.distinctHandled} / ${r.pages}`,
        String(r.handledTwice) + (r.killed ? ` (${r.handledTwiceHeld} held by the killed one)` : ''),
        `${pct(refused(r))} ${mark(refused(r) <= B8_TARGETS.maxRefusedShare)}`,
        `${(r.makespanMs / 1000).toFixed(1)} s`,
        rate(r).toFixed(1),
        r.killed ? '' : `${ideal(r.processes).toFixed(1)} (${pct(rate(r) / ideal(r.processes))})`,
        r.storage === 'redis' && baseRate ? `${(rate(r) / baseRate).toFixed(2)}x` : '',
        perPage(r.cpuMs, r).toFixed(1),
        r.storage === 'redis' ? perPage(r.redisCpuMs, r).toFixed(2) : '',
        r.storage === 'redis' ? perPage(r.redisCommands, r).toFixed(1) : '',
        r.storage === 'redis' ? perPage(r.redisScripts, r).toFixed(1) : '',
    ]);
    const table = mdTable(
        [
            'processes',
            'pages handled',
            'handled twice',
            'refused (paced sites)',
            'makespan',
            'pages/s',
            'ideal pages/s (reached)',
            'vs 1 on Redis',
            'crawler CPU ms/page',
            'Redis CPU ms/page',
            'Redis commands/page',
            'scripts/page',
        ],
        rows,
    );
    const four = result.runs.find((r) => r.storage === 'redis' && r.processes === 4 && !r.killed);
    const lines = [intro, '', table, ''];
    if (four && baseRate)
        lines.push(
            `4 processes: ${(rate(four) / baseRate).toFixed(2)}x the pages/s of 1 (target ≥ ${B8_TARGETS.speedup4over1}x) ${mark(rate(four) / baseRate >= B8_TARGETS.speedup4over1)}; the ideal (a perfect scheduler bound only by the graph's depth, the 1 s answers, the slots and the known paces) is ${(ideal(4) / ideal(1)).toFixed(2)}x.`,
        );
    if (memoryRun && one)
        lines.push(
            `Cost per page against memory-storage (1 process): crawler CPU ${(perPage(one.cpuMs, one) / Math.max(perPage(memoryRun.cpuMs, memoryRun), 1e-9)).toFixed(2)}x, plus Redis's own ${perPage(one.redisCpuMs, one).toFixed(2)} ms.`,
        );
    if (result.memory) {
        const m = result.memory;
        lines.push(
            '',
            `Redis memory (INFO used_memory delta over ${m.requests.toLocaleString('en')} requests of ~45-character URLs in one queue):`,
            `${m.pendingBytesPerRequest.toFixed(0)} bytes per pending request (${((m.pendingBytesPerRequest * 1e6) / 2 ** 20).toFixed(0)} MiB per million),`,
            `${m.handledBytesPerRequest.toFixed(0)} bytes per handled request (${((m.handledBytesPerRequest * 1e6) / 2 ** 20).toFixed(0)} MiB per million; a handled request keeps its JSON, for dedupe and getRequest).`,
        );
    }
    return lines.join('\n');
}
