import type { FleetRun } from './fleet-run';
import { mdTable } from './markdown';
import type { RedisProcessesResult } from './redis-processes';
import { mean } from './stats';

export const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
export const clockOf = (r: FleetRun) => (r.shared ? 'RedisDomainClock' : 'none (each alone)');

/** Columns of how busy the machine was during a run (from the agreed start to the last process's end). */
export const MACHINE_HEAD = ['CPU: processes + polite-web (cores)', 'machine busy (cores)', 'load 1 min'];

/** CPU the crawler processes and polite-web used over the run, in cores; the machine's busy cores; its load. */
export function machineCells(r: FleetRun): string[] {
    const cores = (ms: number) => (r.makespanMs > 0 ? ms / r.makespanMs : 0).toFixed(2);
    const processesMs = r.workers.reduce((t, w) => t + w.cpuMs, 0);
    const m = r.machine;
    return [
        `${cores(processesMs)} + ${cores(m.ownCpuMs)}`,
        m.busyCores.toFixed(2),
        `${m.loadStart.toFixed(1)} → ${m.loadEnd.toFixed(1)}`,
    ];
}

/** The sentence opening B7: how the processes are set up. */
export function b7Intro(result: RedisProcessesResult): string {
    return (
        `Processes: ${result.sizes.processCounts.join(', ')}; each is a separate \`node\` with its own in-memory ` +
        `queue, given an even share of every site's pages (page p of site s to process (p + s) mod N), and all start ` +
        `crawling at one agreed moment. Redis at ${result.redisUrl}. CPU columns: the processes' own CPU time ` +
        `and polite-web's (the bench process), per second of the crawl; "machine busy" counts every process on ` +
        `the machine, other people's too.`
    );
}

/** The mean steady pace of a run over `rate` (NaN when no site had one). */
export function steadyShare(r: FleetRun, rate: number): number {
    const paces = r.steadyPace.filter((p): p is number => p !== null);
    return paces.length ? mean(paces) / rate : Number.NaN;
}

/**
 * (d): refusals, the pace the sites saw in the crawl's second half, the paces learned, the makespan;
 * the oracle's runs (told the rate) below the learner's, as `told the rate` rows.
 */
export function adaptiveTable(runs: FleetRun[], rate: number, pages: number, oracle: FleetRun[] = []): string {
    const told = new Set(oracle);
    const rows = [...runs, ...oracle].map((r) => {
        const share = steadyShare(r, rate);
        const learned = r.workers.map((w) => {
            const own = Object.values(w.paces);
            return own.length ? mean(own).toFixed(2) : 'n/a';
        });
        return [
            String(r.processes),
            told.has(r) ? `${clockOf(r)}, told the rate (oracle)` : clockOf(r),
            `${r.handled}/${r.requests}`,
            `${pct(r.requests ? r.refusals / r.requests : 0)} (${r.refusals})`,
            r.steadyPace.map((p) => (p === null ? 'n/a' : p.toFixed(2))).join(' / '),
            Number.isFinite(share) ? pct(share) : 'n/a',
            learned.join(' / '),
            `${(r.makespanMs / 1000).toFixed(1)} s (${(((r.makespanMs / 1000) * rate) / pages).toFixed(2)}× ideal)`,
        ];
    });
    const head = ['processes', 'shared clock', 'pages handled / requests', 'refused', 'steady pace per site (req/s)'];
    return mdTable([...head, 'steady pace / site rate (mean)', 'learned pace per process (req/s)', 'makespan'], rows);
}

/**
 * (d) against its oracle: for each process count run both ways sharing Redis, the learner's steady pace
 * over the oracle's (undefined without oracle runs).
 */
export function adaptiveOverOracle(runs: FleetRun[], oracle: FleetRun[], rate: number): string | undefined {
    const pairs = oracle
        .filter((o) => o.shared)
        .map((o) => ({ o, r: runs.find((r) => r.shared && r.processes === o.processes) }))
        .filter((p): p is { o: FleetRun; r: FleetRun } => p.r !== undefined);
    if (pairs.length === 0) return undefined;
    const parts = pairs.map(({ o, r }) => {
        const ratio = steadyShare(r, rate) / steadyShare(o, rate);
        return `${o.processes}: ${Number.isFinite(ratio) ? pct(ratio) : 'n/a'}`;
    });
    return `Steady pace told nothing over told the rate, sharing Redis, by processes: ${parts.join(', ')}.`;
}
