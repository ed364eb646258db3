/** Small text helpers shared by the live table, the summary and the report. */

/** `HH:MM:SS.mmm` of an epoch-ms time, local time. */
export function clockTime(epochMs: number): string {
    const d = new Date(epochMs);
    const two = (n: number) => String(n).padStart(2, '0');
    return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** Seconds with one decimal, e.g. `12.3 s`. */
export function seconds(ms: number): string {
    return `${(ms / 1000).toFixed(1)} s`;
}

export function percent(share: number): string {
    return `${(share * 100).toFixed(1)} %`;
}

/** Renders rows as an aligned text table; columns in `leftAligned` are padded right, the others left. */
export function textTable(header: string[], rows: string[][], leftAligned: readonly number[] = [0]): string[] {
    const all = [header, ...rows];
    const widths = header.map((_, col) => Math.max(...all.map((row) => (row[col] ?? '').length)));
    const line = (row: string[]) =>
        row
            .map((cell, col) => (leftAligned.includes(col) ? cell.padEnd(widths[col]) : cell.padStart(widths[col])))
            .join('  ')
            .trimEnd();
    return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}
