import type { Environment } from './env';
import { mdTable } from './markdown';
import type { FleetRun, RedisProcessesResult } from './redis-processes';
import { sharedClockCostTable } from './shared-clock-cost';

/** Targets of issue #13: sharing holds the pace, and throughput grows with processes. */
export const B7_TARGETS = { maxRefusedShare: 0.01, minGapShare: 0.95, speedup4over1: 3.2 } as const;

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const mark = (ok: boolean) => (ok ? '✅' : '❌');
const clockOf = (r: FleetRun) => (r.shared ? 'RedisDomainClock' : 'none (each alone)');
const late = (r: FleetRun) => (r.lateMs > 0 ? ` (a process started ${r.lateMs} ms late)` : '');

/** Smallest gap over all sites, and whether the run met both pacing targets. */
export function pacingVerdict(
    r: FleetRun,
    intervalMs: number,
): { minGapMs: number; refusedShare: number; ok: boolean } {
    const gaps = r.minGapMs.filter((g): g is number => g !== null);
    const minGapMs = gaps.length ? Math.min(...gaps) : Infinity;
    const refusedShare = r.requests ? r.refusals / r.requests : 0;
    const ok = refusedShare <= B7_TARGETS.maxRefusedShare && minGapMs >= B7_TARGETS.minGapShare * intervalMs;
    return { minGapMs, refusedShare, ok };
}

/** Requests per second of each process count (shared runs), and 4-over-1 (or largest-over-1). */
export function throughputFigures(runs: FleetRun[]) {
    const rate = (r: FleetRun) => (r.makespanMs > 0 ? (r.requests * 1000) / r.makespanMs : 0);
    const shared = runs.filter((r) => r.shared);
    const one = shared.find((r) => r.processes === 1);
    const most = shared.reduce<FleetRun | undefined>((m, r) => (!m || r.processes > m.processes ? r : m), undefined);
    const ratio = one && most && rate(one) > 0 ? rate(most) / rate(one) : NaN;
    return { rate, ratio, mostProcesses: most?.processes ?? 0 };
}

function pacingTable(result: RedisProcessesResult): string {
    const rows = result.pacing.map((r) => {
        const v = pacingVerdict(r, result.intervalMs);
        return [
            String(r.processes),
            clockOf(r),
            `${r.handled}/${r.requests}`,
            `${pct(v.refusedShare)} (${r.refusals})`,
            r.minGapMs.map((g) => (g === null ? 'n/a' : String(g))).join(' / '),
            `${pct(v.minGapMs / result.intervalMs)}`,
            `${(r.makespanMs / 1000).toFixed(1)} s${late(r)}`,
            mark(v.ok),
        ];
    });
    const head = ['processes', 'shared clock', 'pages handled / requests', 'refused', 'min gap per site (ms)'];
    return mdTable([...head, 'min gap / interval', 'makespan', 'targets met'], rows);
}

function throughputTable(result: RedisProcessesResult): string {
    const { rate } = throughputFigures(result.throughput);
    const base = new Map(result.throughput.filter((r) => r.processes === 1).map((r) => [r.shared, rate(r)]));
    const rows = result.throughput.map((r) => [
        String(r.processes),
        clockOf(r),
        `${r.handled}/${r.requests}`,
        String(r.failed),
        `${(r.makespanMs / 1000).toFixed(1)} s${late(r)}`,
        rate(r).toFixed(0),
        base.has(r.shared) ? `${(rate(r) / base.get(r.shared)!).toFixed(2)}×` : 'n/a',
    ]);
    const head = ['processes', 'shared clock', 'pages handled / requests', 'failed', 'makespan', 'requests/s'];
    return mdTable([...head, 'vs 1 process'], rows);
}

/** The B7 section of the benchmark report. */
export function b7Section(result: RedisProcessesResult, env: Environment): string {
    const { sizes, intervalMs } = result;
    const title = '## B7: crawler processes sharing one Redis (RedisDomainClock)';
    if (result.skipped) return `${title}\n\nSkipped: ${result.skipped}.`;
    const { ratio, mostProcesses } = throughputFigures(result.throughput);
    const { pacing: a, throughput: b } = sizes;
    const reached = ratio >= B7_TARGETS.speedup4over1;
    return [
        title,
        `Processes: ${sizes.processCounts.join(', ')}; each is a separate \`node\` with its own in-memory queue, ` +
            `given every process-th page of every site, and all start crawling at one agreed moment. Redis at ${result.redisUrl}.`,
        `### (a) pacing: ${a.sites} sites × ${a.pages} pages at ${a.rate} req/s, burst 1; every process \`delaySecs\` ` +
            `${1 / a.rate} (interval ${intervalMs} ms), maxConcurrency ${a.maxConcurrency}`,
        `Targets with sharing: at most ${pct(B7_TARGETS.maxRefusedShare)} refused and a minimum gap of at least ` +
            `${pct(B7_TARGETS.minGapShare)} of the interval. Without sharing the sites see N processes at once.`,
        pacingTable(result),
        `### (b) throughput: ${b.sites} unlimited sites × ${b.pages} pages (latency ${b.latencyMs} ms), ` +
            `\`delaySecs\` 0, maxConcurrency ${b.maxConcurrency} per process`,
        throughputTable(result),
        Number.isNaN(ratio)
            ? 'No run with 1 process: no scaling figure (quick mode).'
            : `${mostProcesses} processes over 1 (sharing Redis): **${ratio.toFixed(2)}×** ` +
              `(target ≥ ${B7_TARGETS.speedup4over1}×: ${mark(reached)}) on ${env.cores} cores` +
              (reached
                  ? '.'
                  : `: the processes, polite-web and Redis share ${env.cores} cores, so CPU bounds the gain.`),
        `### (c) cost of one reserve, and of a dispatch with a shared slot (slot, reserve, release), ${sizes.costCalls} calls one after another`,
        sharedClockCostTable(result.cost),
    ].join('\n\n');
}
