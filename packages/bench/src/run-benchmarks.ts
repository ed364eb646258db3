import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';

import { type CrawlScenario, runCrawlScenario, type ScenarioResult } from './crawl-scenarios';
import { environment, type Environment, REPO_ROOT } from './env';
import { b1Section, b2Section, b3Section, b4Section, header } from './markdown';
import { type OverheadRow, runOverhead } from './overhead';
import { type PromptnessRow, runPromptness } from './promptness';
import { type RedisProcessesResult, runRedisProcesses } from './redis-processes';
import { type FrontierResultSet, type FrontierSizes, runFrontierBench } from './frontier-bench';
import { b8Section } from './frontier-markdown';
import { b7Section } from './redis-processes-markdown';
import { runSoak, type SoakResult, soakSizes } from './soak';
import { b6Section } from './soak-markdown';
import { exposeGc } from './stats';
import { MIX_CONTENDERS, MIX_SEED_SETS, type MixFamilySizes, type MixResult, runMixFamily } from './mix-family';
import { b5Section } from './mix-family-markdown';

export const SCENARIO_IDS = ['B1', 'B2', 'B3', 'B4', 'B5', 'B6', 'B7', 'B8'] as const;
export type ScenarioId = (typeof SCENARIO_IDS)[number];
/** Run without `only`. B7 and B8 spawn crawler processes and need Redis: they run when asked for (`--only B7`). */
export const DEFAULT_SCENARIOS: readonly ScenarioId[] = SCENARIO_IDS.filter((id) => id !== 'B7' && id !== 'B8');

export interface BenchmarkOptions {
    /** Tiny sizes, for a smoke run. @default false */
    quick?: boolean;
    /** Scenarios to run. @default all but B7 and B8 */
    only?: readonly ScenarioId[];
    /** Markdown file to write; relative paths are resolved against the repo root. @default docs/benchmarks.md */
    out?: string;
    /**
     * B5: which mixes to draw (first seed and count), or a named set: `'report'` (3000, 27), `'tuning'`
     * (4000, 27; tune on these, report on the others). @default 'report' (quick: 2000, 9)
     */
    mixes?: { firstSeed: number; count: number } | keyof typeof MIX_SEED_SETS;
    /** B3: add the row of 100,000 domains × 3 requests (long: tens of minutes). @default false */
    broad?: boolean;
    /** Progress lines. @default to stderr */
    progress?: (line: string) => void;
}

export interface BenchmarkResults {
    env: Environment;
    outPath: string;
    markdown: string;
    b1?: ScenarioResult;
    b2?: ScenarioResult;
    b3?: OverheadRow[];
    b4?: PromptnessRow[];
    b5?: MixResult[];
    b6?: SoakResult;
    b7?: RedisProcessesResult;
    b8?: FrontierResultSet;
}

/**
 * Why B3 does not run `'perDomain'` at 100,000 domains: memory-storage scans every open queue on each
 * storage call, which already makes it 5× the bare queue at 10,000, and its kept heap per domain
 * (about 22 KB at 10,000) would pass half of V8's heap limit long before 100,000 queues.
 */
const PER_DOMAIN_AT_100K =
    "one Crawlee queue per domain: memory-storage scans every open queue on each call (≈5× the bare queue at 10,000 domains, growing with them) and each keeps ≈22 KB (≈2 GB for 100,000); use `'shared'`";

/** Sizes of every scenario, full or quick. */
export function benchmarkSizes(quick: boolean, broad = false) {
    const crawl = (id: 'B1' | 'B2', extra: Partial<CrawlScenario>): CrawlScenario => ({
        id,
        title: id,
        sites: quick ? 2 : 4,
        pages: quick ? 6 : 60,
        rate: 5,
        burst: 2,
        timeoutMs: quick ? 30_000 : 120_000,
        ...extra,
    });
    return {
        b1: crawl('B1', {}),
        b2: crawl('B2', { crawlDelay: 0.2 }),
        b3: {
            domainCounts: quick ? [1, 100] : [1, 100, 10_000],
            requests: quick ? 500 : 20_000,
            capMs: quick ? 30_000 : 300_000,
            // A shared machine's load drifts: three rounds, each against its own baseline, median reported.
            rounds: quick ? 1 : 3,
            // Fed as a crawl is, in batches at the front, the same for every store (see OverheadSize.forefront
            // and batch): added all at once, memory-storage's head listing alone takes the bare queue hours.
            extraRows: broad
                ? [
                      {
                          domains: 100_000,
                          requests: 300_000,
                          capMs: 1_800_000,
                          forefront: true,
                          batch: 1_000,
                          skipLayouts: { perDomain: PER_DOMAIN_AT_100K },
                      },
                  ]
                : [],
        },
        b4: {
            intervalMs: 200,
            // 300 requests give 299 gaps, so p99 is not simply the single worst one.
            throttlerRuns: quick
                ? [{ domains: 1, requests: 12 }]
                : [
                      { domains: 1, requests: 300 },
                      { domains: 10, requests: 50 },
                  ],
            referenceRequests: quick ? 12 : 50,
            timeoutMs: quick ? 30_000 : 120_000,
        },
        // The quick run, the report and the tuning draw different seeds; nine consecutive seeds meet every
        // kind of site once as a mix's first site.
        b5: (quick
            ? { ...MIX_SEED_SETS.quick, longShare: 0, pages: 8, minRate: 2, capIdeal: 4, capSlackMs: 20_000 }
            : { ...MIX_SEED_SETS.report, longShare: 0.2, capIdeal: 3, capSlackMs: 20_000 }) as MixFamilySizes,
        b6: soakSizes(quick),
        b7: {
            // Quick: one pair of processes, with and without Redis, to show sharing works (no scaling figure).
            processCounts: quick ? [2] : [1, 2, 4],
            pacing: { sites: quick ? 1 : 4, pages: quick ? 6 : 24, rate: 5, maxConcurrency: 4 },
            throughput: { sites: quick ? 20 : 400, pages: quick ? 2 : 5, latencyMs: 20, maxConcurrency: 10 },
            // Slow sites, every process at 10 in flight from the start: about 10 requests/s per process,
            // far below what one core can do, so only the shared clock could keep 4 from 4x.
            latencyBound: { sites: quick ? 20 : 200, pages: quick ? 2 : 3, latencyMs: 1000, maxConcurrency: 10 },
            adaptive: {
                sites: quick ? 1 : 4,
                pages: quick ? 10 : 80,
                rate: 5,
                maxConcurrency: 4,
                compareUnshared: !quick,
            },
            costCalls: quick ? 200 : 2_000,
            startInMs: quick ? 2_500 : 5_000,
            timeoutMs: quick ? 60_000 : 300_000,
        },
        b8: {
            processCounts: quick ? [2] : [1, 2, 4],
            // Slow pages (1 s) at 10 in flight per process: about 10 pages/s each, far below what a
            // core can do, so the shared frontier and clock, not the CPU, decide how 4 compare to 1.
            sites: quick ? 4 : 20,
            pacedSites: quick ? 1 : 4,
            pacedRate: 4,
            pages: quick ? 6 : 30,
            latencyMs: quick ? 200 : 1_000,
            maxConcurrency: 10,
            lockSecs: quick ? 5 : 20,
            killProcesses: quick ? 2 : 4,
            killAfterPages: quick ? 3 : 40,
            memoryRequests: quick ? 2_000 : 100_000,
            timeoutMs: quick ? 60_000 : 400_000,
        } as FrontierSizes,
    };
}

/**
 * Where the report goes: `out` resolved against the repo root (not the current directory), or by
 * default docs/benchmarks.md for a run of the default scenarios. A run of chosen ones (`only`) holds
 * only their sections, so it defaults to bench-results/benchmarks-<ids>.md: written over
 * docs/benchmarks.md, it dropped every other section there (each is pasted from its own command).
 */
export function resolveOut(out: string | undefined, only?: readonly string[]): string {
    const path = out ?? (only ? `bench-results/benchmarks-${only.join('-')}.md` : 'docs/benchmarks.md');
    return isAbsolute(path) ? path : resolve(REPO_ROOT, path);
}

/** Runs the selected scenarios side by side in this process and writes the markdown report. */
export async function runBenchmarks(options: BenchmarkOptions = {}): Promise<BenchmarkResults> {
    const quick = options.quick ?? false;
    const only = options.only ?? DEFAULT_SCENARIOS;
    const progress = options.progress ?? ((line: string) => void process.stderr.write(`${line}\n`));
    const sizes = benchmarkSizes(quick, options.broad ?? false);
    if (options.mixes) {
        sizes.b5 = {
            ...sizes.b5,
            ...(typeof options.mixes === 'string' ? MIX_SEED_SETS[options.mixes] : options.mixes),
        };
    }
    const env = environment();
    exposeGc();

    const results: Omit<BenchmarkResults, 'markdown' | 'outPath'> = { env };
    const sections: string[] = [];
    if (only.includes('B1')) {
        results.b1 = await runCrawlScenario(sizes.b1, progress);
        sections.push(b1Section(results.b1));
    }
    if (only.includes('B2')) {
        results.b2 = await runCrawlScenario(sizes.b2, progress);
        sections.push(b2Section(results.b2));
    }
    if (only.includes('B3')) {
        results.b3 = await runOverhead(sizes.b3, progress);
        sections.push(b3Section(results.b3, sizes.b3.requests));
    }
    if (only.includes('B4')) {
        results.b4 = await runPromptness(sizes.b4, progress);
        sections.push(b4Section(results.b4, sizes.b4.intervalMs));
    }
    if (only.includes('B6')) {
        results.b6 = await runSoak(sizes.b6, progress);
        sections.push(b6Section(results.b6));
    }
    if (only.includes('B7')) {
        results.b7 = await runRedisProcesses(sizes.b7, progress);
        sections.push(b7Section(results.b7, env));
    }

    if (only.includes('B8')) {
        results.b8 = await runFrontierBench(sizes.b8, progress);
        sections.push(b8Section(results.b8));
    }

    if (only.includes('B5')) {
        results.b5 = await runMixFamily(sizes.b5, progress);
        sections.push(b5Section(results.b5, sizes.b5, MIX_CONTENDERS));
    }

    const command = [
        'npm run bench',
        ...(quick || options.only || options.mixes || options.broad ? ['--'] : []),
        ...(quick ? ['--quick'] : []),
        ...(options.broad ? ['--broad'] : []),
        ...(options.only ? [`--only ${only.join(',')}`] : []),
        ...(typeof options.mixes === 'string' ? [`--mixes ${options.mixes}`] : []),
        ...(typeof options.mixes === 'object' ? [`--mixes ${options.mixes.firstSeed},${options.mixes.count}`] : []),
    ].join(' ');
    const markdown = `${[header(env, quick, only, command), ...sections].join('\n\n')}\n`;
    const outPath = resolveOut(options.out, options.only);
    await mkdir(dirname(outPath), { recursive: true });
    await writeFile(outPath, markdown);
    progress(`Wrote ${outPath}`);
    return { ...results, markdown, outPath };
}
