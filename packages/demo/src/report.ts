import type { CrawlRun, RateSample, TimelineEntry } from './crawl';
import type { DemoSite } from './sites';
import type { CrawlFigures, SiteFigures } from './summary';
import { percent, seconds } from './format';
import { processCounts } from './live';

/** What the report shows: the sites, the throttled crawl and (optionally) the baseline. */
export interface ReportInput {
    generatedAt: Date;
    sites: DemoSite[];
    pagesPerSite: number;
    /** Shown as given to the throttler's constructor. */
    throttlerOptions: object;
    throttled: { run: CrawlRun; figures: CrawlFigures };
    baseline?: { run: CrawlRun; figures: CrawlFigures };
    /** How the crawls were set up, in words (default: one CheerioCrawler with and without the throttler). */
    setup?: string;
}

const COLORS = { ok: '#2f9e55', refused: '#d9423a', other: '#9aa0a6', robots: '#3b7dd8', backoff: '#f0a020' };

const WIDTH = 1200;
const PLOT_X0 = 240;
const PLOT_X1 = WIDTH - 16;
const LANE_H = 19;
const LANE_OK_Y = 8;
const LANE_BAD_Y = LANE_OK_Y + LANE_H + 3;
/** The lane that marks which crawler process sent each request (multi-process runs). */
const PROCESS_LANE_H = 8;
const PROCESS_COLORS = ['#7048e8', '#0b7285', '#d9480f', '#5c940d', '#c2255c', '#1864ab', '#862e9c', '#e67700'];

/** A process's colour (labels are 1, 2, …). */
function processColor(label: string): string {
    const n = Number.parseInt(label, 10);
    return PROCESS_COLORS[(Number.isFinite(n) ? n - 1 : 0) % PROCESS_COLORS.length];
}

function esc(text: string): string {
    return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function classify(e: TimelineEntry): 'ok' | 'refused' | 'other' | 'robots' {
    if (e.path === '/robots.txt') return 'robots';
    if (e.status >= 200 && e.status < 300) return 'ok';
    if (e.status === 429 || e.status === 503) return 'refused';
    return 'other';
}

/** A tick step (ms) giving at most ~12 labelled ticks over `spanMs`. */
function tickStep(spanMs: number): number {
    for (const step of [100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000])
        if (spanMs / step <= 12) return step;
    return 120000;
}

/** One domain's timeline: requests as marks in two lanes (served / refused and other), backoff shaded. */
function timelineSvg(
    kind: string,
    site: DemoSite,
    entries: TimelineEntry[],
    backoffs: { start: number; end: number }[],
    f: SiteFigures | undefined,
    spanMs: number,
    rates: RateSample[] = [],
): string {
    const host = site.options.host;
    const x = (t: number) => PLOT_X0 + (Math.max(0, Math.min(t, spanMs)) / spanMs) * (PLOT_X1 - PLOT_X0);
    const byProcess = entries.some((e) => e.client !== undefined);
    const processY = LANE_BAD_Y + LANE_H + 3;
    const axisY = byProcess ? processY + PROCESS_LANE_H + 4 : LANE_BAD_Y + LANE_H + 4;
    const height = Math.max(axisY + 16, byProcess ? LANE_OK_Y + 72 : 0);
    const parts: string[] = [];
    parts.push(
        `<rect class="plot" x="${PLOT_X0}" y="${LANE_OK_Y - 3}" width="${PLOT_X1 - PLOT_X0}" height="${axisY - LANE_OK_Y + 1}"/>`,
    );
    const step = tickStep(spanMs);
    for (let t = 0; t <= spanMs; t += step) {
        const tx = x(t).toFixed(1);
        parts.push(`<line class="grid" x1="${tx}" x2="${tx}" y1="${LANE_OK_Y - 3}" y2="${axisY}"/>`);
        parts.push(`<text class="tick" x="${tx}" y="${axisY + 12}">${t / 1000} s</text>`);
    }
    for (const b of backoffs) {
        const x0 = x(b.start);
        const w = Math.max(1, x(b.end) - x0);
        parts.push(
            `<rect class="backoff" x="${x0.toFixed(1)}" y="${LANE_OK_Y - 3}" width="${w.toFixed(1)}" height="${axisY - LANE_OK_Y + 1}"><title>backing off ${seconds(b.end - b.start)} (from ${(b.start / 1000).toFixed(2)} s)</title></rect>`,
        );
    }
    for (const e of entries) {
        const kindOf = classify(e);
        const y = kindOf === 'ok' || kindOf === 'robots' ? LANE_OK_Y : LANE_BAD_Y;
        const sender = e.client === undefined ? '' : `, sent by process ${esc(e.client)}`;
        const title = `<title>${esc(e.path)} → ${e.status} at ${(e.t / 1000).toFixed(3)} s${sender}</title>`;
        parts.push(
            `<rect class="m ${kindOf}" x="${(x(e.t) - 1).toFixed(1)}" y="${y}" width="2" height="${LANE_H}">${title}</rect>`,
        );
        if (e.client !== undefined)
            parts.push(
                `<rect class="p" data-process="${esc(e.client)}" x="${(x(e.t) - 1).toFixed(1)}" y="${processY}" width="2" height="${PROCESS_LANE_H}" fill="${processColor(e.client)}">${title}</rect>`,
            );
    }
    if (rates.length > 1) {
        // The pace the throttler set (rampup rate or 1 / interval), scaled to the plot's height.
        const top = Math.max(...rates.map((r) => r.rate));
        const y = (rate: number) => axisY - (rate / top) * (axisY - LANE_OK_Y);
        const points = rates.map((r) => `${x(r.t).toFixed(1)},${y(r.rate).toFixed(1)}`).join(' ');
        parts.push(
            `<polyline class="pace" points="${points}"><title>pace set by the throttler, up to ${top.toFixed(1)} req/s</title></polyline>`,
        );
        parts.push(
            `<text class="pace-label" x="${PLOT_X1 - 4}" y="${LANE_OK_Y + 9}">pace ≤ ${top.toFixed(1)}/s</text>`,
        );
    }
    const stats = f ? `${f.pages}/${f.pagesTotal} pages · ${f.requests} req · ${f.refusals} refused` : '';
    const counts = new Map<string, number>();
    for (const e of entries)
        if (e.client !== undefined && e.path !== '/robots.txt') counts.set(e.client, (counts.get(e.client) ?? 0) + 1);
    return [
        `<svg class="timeline" data-crawl="${kind}" data-domain="${esc(host)}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${esc(`${host} requests over time (${kind})`)}">`,
        `<text class="host" x="0" y="${LANE_OK_Y + 6}">${esc(host)}</text>`,
        `<text class="limits" x="0" y="${LANE_OK_Y + 20}">${esc(site.pacing)}</text>`,
        `<text class="limits" x="0" y="${LANE_OK_Y + 32}">${esc(site.refusal)}</text>`,
        `<text class="stats" x="0" y="${LANE_OK_Y + 46}">${esc(stats)}</text>`,
        `<text class="lane" x="${PLOT_X0 - 5}" y="${LANE_OK_Y + 13}">2xx</text>`,
        `<text class="lane" x="${PLOT_X0 - 5}" y="${LANE_BAD_Y + 13}">refused</text>`,
        byProcess ? `<text class="lane" x="${PLOT_X0 - 5}" y="${processY + 7}">process</text>` : '',
        byProcess ? `<text class="stats" x="0" y="${LANE_OK_Y + 60}">${esc(processCounts(counts))}</text>` : '',
        ...parts,
        '</svg>',
    ].join('');
}

function figuresRow(f: SiteFigures): string {
    return `<td class="n first">${f.pages}/${f.pagesTotal}</td><td class="n">${f.requests}</td><td class="n">${f.refusals} <span class="dim">(${percent(f.refusedShare)})</span></td><td class="n">${seconds(f.makespanMs)}</td>`;
}

function figuresTable(input: ReportInput): string {
    const { throttled, baseline } = input;
    const groups = baseline ? [throttled, baseline] : [throttled];
    const head = (label: string) => `<th colspan="4" class="group first">${esc(label)}</th>`;
    const headOf = (run: CrawlRun) => run.heading;
    const sub = '<th class="first">pages</th><th>requests</th><th>refused</th><th>makespan</th>';
    const rows = input.sites.map((site, i) => {
        const cells = groups.map((g) => figuresRow(g.figures.sites[i])).join('');
        return `<tr><td><b>${esc(site.options.host)}</b><br><span class="dim">${esc(site.pacing)}<br>${esc(site.refusal)}</span></td>${cells}</tr>`;
    });
    rows.push(`<tr class="total"><td>total</td>${groups.map((g) => figuresRow(g.figures.total)).join('')}</tr>`);
    const notes = (f: CrawlFigures) =>
        `<td colspan="4" class="note first">crawl took ${seconds(f.durationMs)} · ${f.requestsFailed} failed${f.timedOut ? ' · stopped at the time cap' : ''}</td>`;
    rows.push(`<tr class="notes"><td></td>${groups.map((g) => notes(g.figures)).join('')}</tr>`);
    return [
        '<table class="figures">',
        `<thead><tr><th rowspan="2">site</th>${head(headOf(throttled.run))}${baseline ? head(headOf(baseline.run)) : ''}</tr>`,
        `<tr>${groups.map(() => sub).join('')}</tr></thead>`,
        `<tbody>${rows.join('\n')}</tbody></table>`,
    ].join('\n');
}

function timelines(run: CrawlRun, figures: CrawlFigures, sites: DemoSite[], spanMs: number): string[] {
    return sites.map((site, i) => {
        const host = site.options.host;
        return timelineSvg(
            run.kind,
            site,
            run.entries.filter((e) => e.site === host),
            run.backoffs[host] ?? [],
            figures.sites[i],
            spanMs,
            run.rates[host],
        );
    });
}

function crawlSection(title: string, run: CrawlRun, figures: CrawlFigures, sites: DemoSite[], spanMs: number): string {
    // A crawl much shorter than the shared scale is a smudge at its left edge: offer it zoomed too.
    const ownSpanMs = Math.max(500, run.durationMs);
    const zoom =
        ownSpanMs < spanMs / 4
            ? [
                  `<details class="zoom"><summary>zoom: the same timelines scaled to this crawl's own ${seconds(run.durationMs)}</summary>`,
                  ...timelines(run, figures, sites, ownSpanMs).map((svg) =>
                      svg.replace('<svg class="timeline"', '<svg class="timeline zoomed"'),
                  ),
                  '</details>',
              ]
            : [];
    const t = figures.total;
    return [
        `<section class="crawl ${run.kind}">`,
        `<h2>${esc(title)}</h2>`,
        `<p class="sub">${esc(run.label)} · ${t.pages}/${t.pagesTotal} pages · ${t.requests} requests · ${t.refusals} refused (${percent(t.refusedShare)}) · makespan ${seconds(t.makespanMs)} · ${figures.requestsFailed} failed${figures.timedOut ? ' · stopped at the time cap' : ''}</p>`,
        ...timelines(run, figures, sites, spanMs),
        ...zoom,
        '</section>',
    ].join('\n');
}

const STYLE = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1240px; padding: 0 16px; color: #1f2328; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 2px; }
p.meta, p.sub { color: #59636e; margin: 2px 0 10px; }
table.figures { border-collapse: collapse; margin: 12px 0; font-variant-numeric: tabular-nums; }
table.figures th, table.figures td { padding: 3px 9px; border-bottom: 1px solid #e4e7eb; text-align: left; white-space: nowrap; }
table.figures th { background: #f6f8fa; font-weight: 600; }
table.figures td.n { text-align: right; vertical-align: top; }
table.figures .first { border-left: 2px solid #d0d7de; }
table.figures th.group { text-align: center; }
.dim { color: #59636e; font-weight: normal; font-size: 12px; }
table.figures tr.total td { font-weight: 600; }
table.figures tr.notes td { color: #59636e; border-bottom: none; text-align: center; }
.legend { display: flex; gap: 18px; align-items: center; color: #59636e; margin: 8px 0 0; flex-wrap: wrap; }
.legend span.chip { display: inline-block; width: 12px; height: 12px; margin-right: 5px; vertical-align: -1px; border-radius: 2px; }
section.crawl { margin-top: 8px; }
details.zoom { margin: 6px 0 0; }
details.zoom summary { cursor: pointer; color: #59636e; }
svg.timeline { display: block; width: 100%; height: auto; margin: 4px 0; }
svg.timeline .plot { fill: #fafbfc; stroke: #e4e7eb; }
svg.timeline .grid { stroke: #e4e7eb; stroke-width: 1; }
svg.timeline .tick { font-size: 10px; fill: #8b949e; text-anchor: middle; }
svg.timeline .host { font-size: 13px; font-weight: 600; fill: #1f2328; }
svg.timeline .limits { font-size: 10.5px; fill: #59636e; }
svg.timeline .stats { font-size: 10.5px; fill: #1f2328; }
svg.timeline .lane { font-size: 10px; fill: #8b949e; text-anchor: end; }
svg.timeline .backoff { fill: ${COLORS.backoff}; fill-opacity: 0.28; }
svg.timeline .pace { fill: none; stroke: #3b5bdb; stroke-width: 1.5; stroke-opacity: 0.85; }
svg.timeline .pace-label { font-size: 10px; fill: #3b5bdb; text-anchor: end; }
svg.timeline .m.ok { fill: ${COLORS.ok}; }
svg.timeline .m.refused { fill: ${COLORS.refused}; }
svg.timeline .m.other { fill: ${COLORS.other}; }
svg.timeline .m.robots { fill: ${COLORS.robots}; }
`;

function capitalised(text: string): string {
    return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A self-contained HTML page (inline CSS and SVG, no external assets). */
export function renderReport(input: ReportInput): string {
    const { throttled, baseline, sites } = input;
    const spanMs = Math.max(1000, throttled.run.durationMs, baseline?.run.durationMs ?? 0);
    const chip = (color: string, label: string) =>
        `<span><span class="chip" style="background:${color}"></span>${label}</span>`;
    const processes = [
        ...new Set(
            [...throttled.run.entries, ...(baseline?.run.entries ?? [])].flatMap((e) => (e.client ? [e.client] : [])),
        ),
    ].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    const legend = [
        ...processes.map((p) => chip(processColor(p), `process ${esc(p)}`)),
        chip(COLORS.ok, '2xx'),
        chip(COLORS.refused, '429 / 503 refusal'),
        chip(COLORS.other, 'other status'),
        chip(COLORS.robots, 'robots.txt'),
        `<span><span class="chip" style="background:${COLORS.backoff};opacity:.45"></span>throttler backing off</span>`,
        '<span>both crawls on one time scale; hover a mark for its path and status</span>',
    ].join('');
    return [
        '<!doctype html>',
        '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
        '<title>Crawlee throttling demo report</title>',
        `<style>${STYLE}</style></head><body>`,
        '<h1>Crawlee throttling demo</h1>',
        `<p class="meta">${esc(input.generatedAt.toISOString())} · ${sites.length} sites × ${input.pagesPerSite} pages (plus <code>/</code>) on a local polite web · ${input.setup === undefined ? `crawl starts at ${esc(sites[0]?.options.host ?? '')}/ and discovers the other sites by cross-links` : 'every page given up front'}</p>`,
        input.setup === undefined
            ? `<p class="meta">Throttled crawl: <code>new ThrottlingRequestManager(${esc(JSON.stringify(input.throttlerOptions))})</code>, attached to a CheerioCrawler with default settings. Baseline: the same CheerioCrawler on a plain RequestQueue.</p>`
            : `<p class="meta">${esc(input.setup)} Each: <code>new ThrottlingRequestManager(${esc(JSON.stringify(input.throttlerOptions))})</code>.</p>`,
        figuresTable(input),
        `<div class="legend">${legend}</div>`,
        crawlSection(capitalised(throttled.run.heading), throttled.run, throttled.figures, sites, spanMs),
        baseline ? crawlSection(capitalised(baseline.run.heading), baseline.run, baseline.figures, sites, spanMs) : '',
        '</body></html>',
        '',
    ].join('\n');
}
