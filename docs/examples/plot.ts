// Renders the rampup example's run as an SVG: the searched rate over time, the rate the server
// actually served (per second), and each refusal as a red tick.
export function rampupPlot(
    run: { rates: { at: number; rate: number }[]; arrivals: { at: number; status: number }[] },
    limit: number,
): string {
    // Before its first refusal the search does not pace at all (an infinite rate): not drawn.
    const rates = run.rates.filter((r) => Number.isFinite(r.rate));
    const start = Math.min(...run.arrivals.map((a) => a.at));
    const end = Math.max(...run.arrivals.map((a) => a.at));
    const width = 720;
    const height = 260;
    const pad = { left: 48, right: 16, top: 16, bottom: 36 };
    const seconds = Math.max(1, (end - start) / 1000);
    const maxRate = Math.max(limit * 1.6, ...rates.map((r) => r.rate));
    const x = (at: number) => pad.left + ((at - start) / 1000 / seconds) * (width - pad.left - pad.right);
    const y = (rate: number) => height - pad.bottom - (rate / maxRate) * (height - pad.top - pad.bottom);
    const searched = rates
        .map((r, i) => `${i === 0 ? 'M' : 'L'}${x(r.at).toFixed(1)},${y(r.rate).toFixed(1)}`)
        .join(' ');
    const served: string[] = [];
    for (let t = start; t <= end; t += 250) {
        const n = run.arrivals.filter((a) => a.status < 400 && a.at > t - 1000 && a.at <= t).length;
        served.push(`${served.length === 0 ? 'M' : 'L'}${x(t).toFixed(1)},${y(n).toFixed(1)}`);
    }
    const refusals = run.arrivals
        .filter((a) => a.status >= 400)
        .map(
            (a) =>
                `<line x1="${x(a.at).toFixed(1)}" x2="${x(a.at).toFixed(1)}" y1="${height - pad.bottom}" y2="${pad.top}" stroke="#d33" stroke-width="1" opacity="0.6"/>`,
        )
        .join('');
    const ticks = Array.from({ length: Math.floor(seconds) + 1 }, (_, s) => s)
        .filter((s) => s % 2 === 0)
        .map(
            (s) =>
                `<text x="${x(start + s * 1000).toFixed(1)}" y="${height - 14}" font-size="11" text-anchor="middle">${s}s</text>`,
        )
        .join('');
    const rateTicks = Array.from({ length: Math.floor(maxRate) + 1 }, (_, r) => r)
        .filter((r) => r % 2 === 0)
        .map((r) => `<text x="${pad.left - 6}" y="${y(r) + 4}" font-size="11" text-anchor="end">${r}</text>`)
        .join('');
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(limit)}" y2="${y(limit)}" stroke="#999" stroke-dasharray="4 3"/>
<text x="${width - pad.right}" y="${y(limit) - 4}" font-size="11" text-anchor="end" fill="#666">server limit ${limit}/s</text>
${refusals}
<path d="${served.join(' ')}" fill="none" stroke="#4a4" stroke-width="1.5"/>
<path d="${searched}" fill="none" stroke="#36c" stroke-width="2"/>
${ticks}${rateTicks}
<text x="${pad.left}" y="12" font-size="11" fill="#36c">searched rate (req/s)</text>
<text x="${pad.left + 150}" y="12" font-size="11" fill="#4a4">served per second</text>
<text x="${pad.left + 290}" y="12" font-size="11" fill="#d33">refusal (429)</text>
</svg>
`;
}
