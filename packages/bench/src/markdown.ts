import type { ContenderResult, ScenarioResult } from './crawl-scenarios';
import type { Environment } from './env';
import { costPerRequestMs, type LayoutMeasurement, type OverheadMeasurement, type OverheadRow } from './overhead';
import type { PromptnessRow } from './promptness';

export function mdTable(header: string[], rows: string[][], align?: ('l' | 'r')[]): string {
    const a = align ?? header.map((_, i) => (i === 0 ? 'l' : 'r'));
    return [
        `| ${header.join(' | ')} |`,
        `| ${a.map((x) => (x === 'l' ? ':---' : '---:')).join(' | ')} |`,
        ...rows.map((r) => `| ${r.join(' | ')} |`),
    ].join('\n');
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const ms1 = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(1)} ms` : 'n/a');
const mark = (ok: boolean) => (ok ? '✅' : '❌');

const CONTENDER_NAMES: Record<ContenderResult['contender'], string> = {
    plain: '(a) plain Crawlee',
    sameDomainDelay: '(b) sameDomainDelaySecs',
    maxRequestsPerMinute: '(c) maxRequestsPerMinute',
    throttler: '(d) throttler',
    throttlerBackoffOnly: '(e) throttler, rampup: false',
};

function crawlRows(result: ScenarioResult, withViolations: boolean): string[][] {
    return result.contenders.map((c) => {
        const row = [
            CONTENDER_NAMES[c.contender],
            `\`${c.setup}\``,
            `${pct(c.pagesCompleted / c.pagesTotal)} (${c.pagesCompleted}/${c.pagesTotal})`,
            String(c.requests),
            `${pct(c.refusedShare)} (${c.refusals})`,
        ];
        if (withViolations) row.push(String(c.crawlDelayViolations));
        row.push(
            String(c.failed),
            secs(c.makespanMs),
            `${(c.makespanMs / c.idealMs).toFixed(2)}×`,
            `${secs(c.wallMs)}${c.timedOut ? ' ⏱ cap' : ''}`,
        );
        return row;
    });
}

function crawlHeader(withViolations: boolean): string[] {
    const h = [
        'contender',
        'setup',
        'pages completed',
        'requests',
        'refused',
        ...(withViolations ? ['crawl-delay violations'] : []),
    ];
    return [...h, 'failed', 'makespan', 'makespan / ideal', 'wall time'];
}

function throttlerOf(
    result: ScenarioResult,
    contender: ContenderResult['contender'] = 'throttler',
): ContenderResult | undefined {
    return result.contenders.find((c) => c.contender === contender);
}

export function b1Section(r: ScenarioResult): string {
    const s = r.scenario;
    // B1's targets are those of the defaults (adaptive pacing, limits unknown); (e) shows backoff alone beside it.
    const t = throttlerOf(r);
    const targets = t
        ? [
              `Measured on ${CONTENDER_NAMES[t.contender]}:`,
              `- 100 % completed: ${mark(t.pagesCompleted === t.pagesTotal)} ${pct(t.pagesCompleted / t.pagesTotal)}`,
              `- ≤ 5 % refused: ${mark(t.refusedShare <= 0.05)} ${pct(t.refusedShare)}`,
              `- ≤ 1.3 × ideal: ${mark(t.makespanMs <= 1.3 * t.idealMs && !t.timedOut)} ${(t.makespanMs / t.idealMs).toFixed(3)}× (${secs(t.makespanMs)})`,
          ]
        : [];
    return [
        '## B1 — unknown limits',
        '',
        `${s.sites} sites × ${s.pages} pages, each ${s.rate} req/s with a burst of ${s.burst}, refusing with 429 + \`Retry-After: 1\` (seconds). ` +
            `HttpCrawler, all ${s.sites * s.pages} URLs given up front (interleaved by site). Ideal makespan = pages / rate = ${secs((s.pages / s.rate) * 1000)}. ` +
            `Each contender is capped at ${secs(s.timeoutMs)}; baselines keep Crawlee's default \`maxRequestRetries\` (3).`,
        '',
        mdTable(crawlHeader(false), crawlRows(r, false), ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r']),
        '',
        'Throttler targets:',
        ...targets,
    ].join('\n');
}

export function b2Section(r: ScenarioResult): string {
    const s = r.scenario;
    const t = throttlerOf(r);
    const targets = t
        ? [
              `- 100 % completed: ${mark(t.pagesCompleted === t.pagesTotal)} ${pct(t.pagesCompleted / t.pagesTotal)}`,
              `- zero crawl-delay violations: ${mark(t.crawlDelayViolations === 0)} ${t.crawlDelayViolations}`,
              `- ≤ 1.05 × ideal: ${mark(t.makespanMs <= 1.05 * t.idealMs && !t.timedOut)} ${(t.makespanMs / t.idealMs).toFixed(3)}× (${(t.makespanMs / 1000).toFixed(2)} s)`,
          ]
        : [];
    return [
        '## B2 — known limits (robots.txt Crawl-delay)',
        '',
        `The B1 sites with \`Crawl-delay: ${s.crawlDelay}\` in robots.txt. A crawl-delay violation is two consecutive requests to a site ` +
            `closer than the crawl delay minus 5 ms (polite-web's score). Ideal makespan = pages × crawl delay = ${secs(s.pages * (s.crawlDelay ?? 0) * 1000)}.`,
        '',
        mdTable(crawlHeader(true), crawlRows(r, true), ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r']),
        '',
        'Throttler targets:',
        ...targets,
    ].join('\n');
}

const STORE_NAMES: Record<OverheadMeasurement['store'], string> = {
    RequestQueue: 'bare RequestQueue',
    perDomain: "manager, `queueLayout: 'perDomain'`",
    shared: "manager, `queueLayout: 'shared'`",
};

/** The median ratio, with the range over the rounds when there were several. */
function ratioCell(l: LayoutMeasurement): string {
    if (l.ratios.length < 2) return `**${l.ratio.toFixed(2)}×**`;
    const low = Math.min(...l.ratios).toFixed(2);
    const high = Math.max(...l.ratios).toFixed(2);
    return `**${l.ratio.toFixed(2)}×** (${low}–${high})`;
}

const bytes = (b: number) => (Math.abs(b) >= 1024 * 1024 ? `${(b / 2 ** 20).toFixed(1)} MB` : `${Math.round(b)} B`);

function b3Rows(rows: OverheadRow[]): string[][] {
    return rows.flatMap((row) => [
        b3Cells(row, row.bare),
        ...row.layouts.map((l) =>
            l.m
                ? b3Cells(row, l.m, l)
                : [
                      row.domains.toLocaleString('en-US'),
                      STORE_NAMES[l.layout],
                      `not run: ${l.notRun}`,
                      b3Shape(row),
                      ...Array.from({ length: 8 }, () => '—'),
                  ],
        ),
    ]);
}

function b3Cells(row: OverheadRow, m: OverheadMeasurement, of?: LayoutMeasurement): string[] {
    return [
        row.domains.toLocaleString('en-US'),
        STORE_NAMES[m.store],
        (m.capped
            ? `${m.added} added, ${m.completed} handled of ${m.requests} (${m.capped} cap)`
            : String(m.requests)) + (m.handledTwice ? `, ${m.handledTwice} handled twice` : ''),
        b3Shape(row),
        `${Math.round(m.added / (m.addMs / 1000))}`,
        `${Math.round(m.completed / (m.drainMs / 1000))}`,
        `${(costPerRequestMs(m) * 1000).toFixed(1)} µs`,
        of ? ratioCell(of) : '1.00×',
        `${m.queuedHeapMb.toFixed(1)} MB`,
        of ? bytes(of.queuedPerDomainB) : '—',
        `${m.retainedHeapMb.toFixed(1)} MB`,
        of ? bytes(of.retainedPerDomainB) : '—',
    ];
}

/** How a row was fed: all at once, or in batches; at the front or the back. */
function b3Shape(row: OverheadRow): string {
    const where = row.forefront ? ', forefront' : '';
    return row.batch && row.batch < row.requests
        ? `${row.batch.toLocaleString('en-US')} added then drained at a time${where}`
        : `all added, then drained${where}`;
}

function b3Targets(rows: OverheadRow[]): string[] {
    const lines: string[] = [];
    const at10k = rows.find((r) => r.domains === 10_000);
    for (const l of at10k?.layouts ?? []) {
        if (!l.m) continue;
        const ok = l.ratio <= 1.5 && !l.m.capped;
        lines.push(
            `- ≤ 1.5× the bare queue's cost per request at 10,000 domains, \`${l.layout}\`: ${mark(ok)} ${l.ratio.toFixed(2)}×`,
        );
    }
    if (!at10k) lines.push('- ≤ 1.5× at 10,000 domains: not measured in this run (add the row, or drop `--quick`).');
    const broad = rows.find((r) => r.domains === 100_000);
    const shared = broad?.layouts.find((l) => l.layout === 'shared');
    if (broad && shared?.m) {
        const complete = !shared.m.capped && shared.m.completed === broad.requests && shared.m.handledTwice === 0;
        const ok = complete && shared.retainedPerDomainB <= 1024;
        lines.push(
            `- 100,000 domains × ${broad.requests / broad.domains} requests complete with ≤ 1 KB heap per idle domain beyond the bare queue, \`shared\`: ` +
                `${mark(ok)} ${complete ? `complete (${shared.m.completed.toLocaleString('en-US')} handled, each once)` : `incomplete (${(shared.m.completed - shared.m.handledTwice).toLocaleString('en-US')} of ${broad.requests.toLocaleString('en-US')} handled)`}, ${bytes(shared.retainedPerDomainB)} per idle domain (with the last batch queued: ${bytes(shared.queuedPerDomainB)} per domain)`,
        );
    } else {
        lines.push('- 100,000 domains × 3 requests: not run (opt in with `npm run bench -- --only B3 --broad`).');
    }
    return lines;
}

export function b3Section(rows: OverheadRow[], requests: number): string {
    return [
        '## B3 — overhead and scale',
        '',
        `add + fetch + mark handled of ${requests.toLocaleString('en-US')} requests (one per domain, round-robin), one call at a time, no crawler, ` +
            "memory storage without persistence, through the manager in each queue layout and through a bare RequestQueue. The manager runs with `domains: 'all'`; " +
            "`'perDomain'` with `maxThrottledDomains` ≥ the domain count (its default of 100 would throw), `'shared'` with its defaults " +
            '(10,000 domains kept, idle ones evicted past that). These rows add every request, then drain them. ' +
            'A row of 100,000 domains × 3 requests runs with `--broad`, shaped as a crawl is: it adds 1,000 requests, drains them, ' +
            "and again, with `forefront: true`, in every store alike. memory-storage keeps handled requests in its queue's table " +
            'and lists the head by walking that table from the front, so with plain adds each listing walks every request handled ' +
            'so far (the bare queue alone would take hours for 300,000); forefront requests are listed from their own index, from which ' +
            'handled ones are dropped, so in batches the walk stays about a batch long. ' +
            'Each measurement runs in a fresh Node process (`--expose-gc`) with its own storage, after a warm-up run of 1,000 requests ' +
            'through the same store in that process. A row runs in rounds (three, one for `--quick` and for the 100,000-domain row), ' +
            "each measuring the bare queue and then each layout; the ratio is the cost per request over the bare queue's " +
            'of the same round, the median of the rounds with their range in brackets, and the other columns are from the ' +
            'measurement of median cost. Heap figures are heapUsed above a settled baseline read in the same process after the ' +
            'warm-up, before the store is opened; settled means after full GCs, each from a fresh task, repeated until one frees ' +
            'under 64 KB. "Last batch queued" is the settled heapUsed once the last requests are added, before they are drained ' +
            '(all of them in the rows added at once; the settling is left out of the timings); "kept once idle" is the settled ' +
            "heapUsed once every request is handled, with the store still alive. The per-domain columns are the manager's figure " +
            "minus the bare queue's of the same round, divided by the domains met (median of the rounds). A measurement that passes " +
            "half of V8's heap limit or its time cap stops there and is costed by the part it did.",
        '',
        mdTable(
            [
                'domains',
                'store',
                'requests',
                'shape',
                'adds/s',
                'fetch+handled/s',
                'cost / request',
                'ratio',
                'heap, last batch queued',
                'queued over bare / domain',
                'kept once idle',
                'kept over bare / idle domain',
            ],
            b3Rows(rows),
            ['r', 'l', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        ),
        '',
        "Where the cost goes: `'perDomain'` keeps one Crawlee `RequestQueue` per domain, and `@crawlee/memory-storage` finds a " +
            'queue by a linear scan of every open queue (comparing lower-cased names) on each storage call (two thirds of the CPU ' +
            'time at 10,000 domains in a profile), so every add, fetch and mark handled costs more with each domain opened; opening ' +
            "a queue costs a storage round trip and Crawlee's argument validation once per domain, and each open queue keeps tens " +
            "of KB. `'shared'` stores every request in the one default queue, as the bare queue does; a domain costs its pacing " +
            'state (evicted once idle past 10,000 domains), and only a domain with more waiting requests than its share of the ' +
            'frontier window (10) gets a queue of its own. Both stores are slowed alike by memory-storage scanning handled requests ' +
            'at the head of a queue on every fetch.',
        '',
        'Targets:',
        ...b3Targets(rows),
    ].join('\n');
}

export function b4Section(rows: PromptnessRow[], intervalMs: number): string {
    const throttlerRow = rows.find((r) => r.domains === 1 && r.setup.startsWith('throttler'));
    return [
        '## B4 — dispatch promptness',
        '',
        `BasicCrawler (no HTTP, \`maxConcurrency: 50\`) with the throttler attached, every domain paced at ${intervalMs} ms ` +
            `(\`minCrawlDelaySecs: ${intervalMs / 1000}\`). Lateness = handler start − (previous handler start of the domain + ${intervalMs} ms). ` +
            "Percentiles are nearest-rank over all gaps. The last row is Crawlee's own `sameDomainDelaySecs` on a plain queue, for reference.",
        '',
        mdTable(
            ['setup', 'requests', 'gaps', 'p50 lateness', 'p99 lateness', 'max', 'min', 'wall time'],
            rows.map((r) => [
                r.setup,
                String(r.requests),
                String(r.samples),
                ms1(r.p50),
                ms1(r.p99),
                ms1(r.max),
                ms1(r.min),
                `${secs(r.wallMs)}${r.timedOut ? ' ⏱ cap' : ''}`,
            ]),
            ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        ),
        '',
        throttlerRow
            ? `Target p99 ≤ 20 ms (throttler, 1 domain): ${mark(throttlerRow.p99 <= 20)} ${throttlerRow.p99.toFixed(2)} ms`
            : '',
    ].join('\n');
}

export function header(env: Environment, quick: boolean, only: readonly string[], command: string): string {
    return [
        '# Benchmarks',
        '',
        `Generated by \`${command}\`${quick ? ' in **quick mode** (tiny sizes: smoke only, not representative)' : ''}; regenerate with the same command. Do not edit by hand.`,
        '',
        mdTable(
            ['', ''],
            [
                ['date', env.date],
                ['node', env.node],
                ['CPU', `${env.cpuModel} × ${env.cores} cores`],
                ['platform', `${env.platform}, ${env.memoryGb} GB RAM`],
                ['Crawlee', env.crawlee],
                ['scenarios', only.join(', ')],
            ],
            ['l', 'l'],
        ),
        '',
        'B1 and B2 run against `@crawlee-throttling/polite-web` (one local server on 127.0.0.1 acting as HTTP proxy for ' +
            "`site-N.example`, token bucket per site; no traffic leaves the machine). Figures come from the server's request log. " +
            "Contenders: (a) HttpCrawler with Crawlee defaults, (b) `sameDomainDelaySecs` = 1 / the sites' true rate, " +
            "(c) `maxRequestsPerMinute` = the combined rate, (d) `ThrottlingRequestManager({ domains: 'all' })` attached, told nothing about the limits (adaptive pacing, the default), (e) the same with `rampup: false` (backoff alone).",
    ].join('\n');
}
