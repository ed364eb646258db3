import type { Environment } from './env';
import type { FleetRun } from './fleet-run';
import { mdTable } from './markdown';
import {
    adaptiveOverOracle,
    adaptiveTable,
    b7Intro,
    clockOf,
    machineCells,
    MACHINE_HEAD,
    pct,
} from './redis-processes-columns';
import type { RedisProcessesResult } from './redis-processes';
import { sharedClockCostTable } from './shared-clock-cost';

/** B7's targets: sharing holds the pace, and throughput grows with processes. */
export const B7_TARGETS = { maxRefusedShare: 0.01, minGapShare: 0.95, speedup4over1: 3.2 } as const;

const mark = (ok: boolean) => (ok ? '✅' : '❌');
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

/** Requests per second of a run (first to last arrival). */
export const requestRate = (r: FleetRun) => (r.makespanMs > 0 ? (r.requests * 1000) / r.makespanMs : 0);

/**
 * Most processes over 1, sharing Redis and not: each the rate of the largest process count over the
 * rate of 1 process with the same clock (NaN without both runs).
 */
export function throughputFigures(runs: FleetRun[]) {
    const most = runs.reduce((m, r) => Math.max(m, r.processes), 0);
    const ratioOf = (shared: boolean) => {
        const one = runs.find((r) => r.shared === shared && r.processes === 1);
        const top = runs.find((r) => r.shared === shared && r.processes === most);
        return one && top && most > 1 && requestRate(one) > 0 ? requestRate(top) / requestRate(one) : NaN;
    };
    return { ratio: ratioOf(true), unsharedRatio: ratioOf(false), mostProcesses: most };
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

function throughputTable(runs: FleetRun[]): string {
    const base = new Map(runs.filter((r) => r.processes === 1).map((r) => [r.shared, requestRate(r)]));
    const rows = runs.map((r) => [
        String(r.processes),
        clockOf(r),
        `${r.handled}/${r.requests}`,
        String(r.failed),
        `${(r.makespanMs / 1000).toFixed(1)} s${late(r)}`,
        requestRate(r).toFixed(0),
        base.has(r.shared) ? `${(requestRate(r) / base.get(r.shared)!).toFixed(2)}×` : 'n/a',
        r.workers.map((w) => w.meanConcurrency.toFixed(1)).join(' / '),
        ...machineCells(r),
    ]);
    const head = ['processes', 'shared clock', 'pages handled / requests', 'failed', 'makespan', 'requests/s'];
    return mdTable([...head, 'vs 1 process', 'mean in flight per process', ...MACHINE_HEAD], rows);
}

/** The scaling sentence under a throughput table, against the issue's target. */
function scalingLine(runs: FleetRun[], env: Environment, cause: string): string {
    const { ratio, unsharedRatio, mostProcesses } = throughputFigures(runs);
    if (Number.isNaN(ratio)) return 'No run with 1 process: no scaling figure (quick mode).';
    const reached = ratio >= B7_TARGETS.speedup4over1;
    return (
        `${mostProcesses} processes over 1: **${ratio.toFixed(2)}×** sharing Redis ` +
        `(target ≥ ${B7_TARGETS.speedup4over1}×: ${mark(reached)})` +
        (Number.isNaN(unsharedRatio) ? '' : `, ${unsharedRatio.toFixed(2)}× each alone`) +
        ` on ${env.cores} cores${reached ? '.' : `: ${cause}`}`
    );
}

/** The B7 section of the benchmark report. */
export function b7Section(result: RedisProcessesResult, env: Environment): string {
    const { sizes, intervalMs } = result;
    const title = '## B7: crawler processes sharing one Redis (RedisDomainClock)';
    if (result.skipped) return `${title}\n\nSkipped: ${result.skipped}.`;
    const { pacing: a, throughput: b, latencyBound: b2, adaptive: d } = sizes;
    return [
        title,
        b7Intro(result),
        `### (a) pacing: ${a.sites} sites × ${a.pages} pages at ${a.rate} req/s, burst 1; every process \`delaySecs\` ` +
            `${1 / a.rate} (interval ${intervalMs} ms), maxConcurrency ${a.maxConcurrency}`,
        `Targets with sharing: at most ${pct(B7_TARGETS.maxRefusedShare)} refused and a minimum gap of at least ` +
            `${pct(B7_TARGETS.minGapShare)} of the interval. Without sharing the sites see N processes at once.`,
        pacingTable(result),
        `### (b) throughput: ${b.sites} unlimited sites × ${b.pages} pages (latency ${b.latencyMs} ms), ` +
            `\`delaySecs\` 0, maxConcurrency ${b.maxConcurrency} per process (Crawlee's autoscaled pool sets the concurrency)`,
        throughputTable(result.throughput),
        scalingLine(
            result.throughput,
            env,
            `the processes, polite-web and Redis share ${env.cores} cores; compare the CPU columns and (b2).`,
        ),
        `### (b2) throughput bound by latency: ${b2.sites} unlimited sites × ${b2.pages} pages (latency ${b2.latencyMs} ms), ` +
            `\`delaySecs\` 0, every process at ${b2.maxConcurrency} in flight from the start (minConcurrency = maxConcurrency)`,
        throughputTable(result.latencyBound),
        scalingLine(result.latencyBound, env, 'see the CPU columns: the crawl was not CPU-bound if they stay low.'),
        `### (c) cost of one reserve, and of a dispatch with a shared slot (slot, reserve, release), ${sizes.costCalls} calls one after another`,
        sharedClockCostTable(result.cost),
        `### (d) adaptive pacing: ${d.sites} sites × ${d.pages} pages at ${d.rate} req/s, burst 1; the processes are told ` +
            `no rate (throttler defaults: adaptive pacing, no \`delaySecs\`), maxConcurrency ${d.maxConcurrency}`,
        `Steady pace: accepted arrivals per second at a site over the second half of its crawl, all processes ` +
            `together. Learned pace: where each process's pacer ended, mean over the sites. The oracle is the same ` +
            `crawl told each site's rate (\`delaySecs\` = 1 / (0.95 × rate), \`rampup: false\`). No targets.`,
        adaptiveTable(result.adaptive, d.rate, d.pages, result.adaptiveOracle),
        ...[adaptiveOverOracle(result.adaptive, result.adaptiveOracle, d.rate)].filter((l) => l !== undefined),
    ].join('\n\n');
}
