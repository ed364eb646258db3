import { parseArgs } from 'node:util';

import { type BenchmarkOptions, SCENARIO_IDS, type ScenarioId } from './run-benchmarks';

export const USAGE = `Usage: npm run bench -- [options]

Runs the benchmarks (B1 unknown limits, B2 known limits, B3 overhead and scale, B4 dispatch
promptness, B5 a seeded family of unknown sites, B6 soak, B7 crawler processes sharing Redis, B8
crawler processes sharing one frontier on Redis) and writes them as markdown tables.
B7 and B8 run only when asked for (--only B7,B8): they spawn crawler processes and need Redis
(REDIS_URL, default redis://127.0.0.1:6379); without one their section says skipped.

  --quick         tiny sizes, for a smoke run
  --broad         B3: add the row of 100,000 domains × 3 requests (whole B3 about 30 to 40 minutes)
  --only LIST     comma-separated scenarios, e.g. B1,B3
  --mixes FIRST,COUNT | report | tuning
                  B5: draw COUNT mixes from seed FIRST, or a named set: report (3000,27, the
                  default), tuning (4000,27: tune on these, report on the others); quick 2000,9
  --out PATH      markdown file, relative to the repo root (default docs/benchmarks.md, or with
                  --only bench-results/benchmarks-<ids>.md, so a partial run leaves the report whole)
  --help          this text`;

export function parseBenchArgs(argv: string[]): BenchmarkOptions & { help: boolean } {
    const { values } = parseArgs({
        args: argv,
        strict: true,
        allowPositionals: false,
        options: {
            quick: { type: 'boolean', default: false },
            broad: { type: 'boolean', default: false },
            only: { type: 'string' },
            out: { type: 'string' },
            mixes: { type: 'string' },
            help: { type: 'boolean', short: 'h', default: false },
        },
    });
    let only: ScenarioId[] | undefined;
    if (values.only !== undefined) {
        const ids = values.only
            .split(',')
            .map((s) => s.trim().toUpperCase())
            .filter(Boolean);
        const unknown = ids.filter((id) => !(SCENARIO_IDS as readonly string[]).includes(id));
        if (unknown.length || ids.length === 0)
            throw new Error(`--only takes a list of ${SCENARIO_IDS.join(', ')}; got "${values.only}"`);
        only = SCENARIO_IDS.filter((id) => ids.includes(id));
    }
    let mixes: BenchmarkOptions['mixes'];
    if (values.mixes === 'report' || values.mixes === 'tuning') {
        mixes = values.mixes;
    } else if (values.mixes !== undefined) {
        const [firstSeed, count] = values.mixes.split(',').map((s) => Number(s.trim()));
        if (!Number.isSafeInteger(firstSeed) || !Number.isSafeInteger(count) || firstSeed < 0 || count < 1)
            throw new Error(
                `--mixes takes FIRST,COUNT (whole numbers, COUNT >= 1), 'report' or 'tuning'; got "${values.mixes}"`,
            );
        mixes = { firstSeed, count };
    }
    return {
        help: values.help ?? false,
        quick: values.quick ?? false,
        broad: values.broad ?? false,
        only,
        out: values.out,
        mixes,
    };
}
