import type { WebScore } from './score-log';

function cell(value: number | string | null): string {
    if (value === null) return '-';
    if (typeof value === 'string') return value;
    return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

/** Renders a score as a fixed-width text table, one row per site plus totals. */
export function formatScoreTable(score: WebScore): string {
    const header = [
        'site',
        'requests',
        'served',
        'distinct',
        'refused',
        'refused %',
        'min gap ms',
        'delay viol.',
        'max in flight',
        'ideal ms',
    ];
    const rows = score.sites.map((s) => [
        s.host,
        s.requests,
        s.served,
        s.distinctPagesServed,
        s.refusals,
        s.refusedShare * 100,
        s.minGapMs,
        s.crawlDelayViolations,
        s.maxInFlight,
        s.idealMs,
    ]);
    const t = score.totals;
    rows.push([
        'total',
        t.requests,
        t.served,
        t.distinctPagesServed,
        t.refusals,
        t.refusedShare * 100,
        null,
        t.crawlDelayViolations,
        t.maxInFlight,
        score.idealMs,
    ]);
    const table = [header, ...rows.map((row) => row.map(cell))];
    const widths = header.map((_, col) => Math.max(...table.map((row) => row[col].length)));
    const line = (row: string[]): string =>
        row.map((text, col) => (col === 0 ? text.padEnd(widths[col]) : text.padStart(widths[col]))).join('  ');
    return [
        line(table[0]),
        widths.map((w) => '-'.repeat(w)).join('  '),
        ...table.slice(1).map(line),
        '',
        `makespan ${cell(score.makespanMs)} ms, ideal ${cell(score.idealMs)} ms`,
    ].join('\n');
}
