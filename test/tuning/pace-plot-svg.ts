/**
 * Draws the pace a manager set for each site over time, as a hand-written SVG: the docs need a few
 * static plots, which does not justify a charting dependency. Pure: the figures come in, a string
 * goes out, so a unit test can check that it stays well-formed.
 */

/** One site of a plot. Times are seconds since the crawl's first request; rates are req/s. */
export interface PaceSiteSeries {
    /** Legend text: the site's rate, burst and way of refusing. */
    label: string;
    trueRate: number;
    /** The site's last request: its pace line stops there, not at the end of the whole crawl. */
    end: number;
    /** The pace in force from `at` on; Infinity while the site is not paced at all. */
    pace: { at: number; rate: number }[];
    /** Answers the site accepted per second, sampled over the crawl of that site. */
    accepted: { at: number; rate: number }[];
    /** When the site refused a request. */
    refusals: number[];
    /** Spans the backoff clock held the site (a refusal's wait, an announced empty quota). */
    held: { from: number; until: number }[];
}

export interface PacePlot {
    title: string;
    /** A second line under the title: where the figures come from. */
    note: string;
    seconds: number;
    sites: PaceSiteSeries[];
}

// Distinguishable on white and for the common colour-vision deficiencies (Okabe–Ito, minus yellow).
const COLOURS = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#000000'];
const WIDTH = 860;
const PLOT = { left: 64, right: 24, top: 76, height: 300 };
const RUG_ROW = 12;
const LEGEND_ROW = 16;

const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const f = (n: number) => n.toFixed(1);

/** Log-scale bounds: powers of two around every true rate and finite pace, so 0.5–20 req/s all show. */
function rateBounds(sites: PaceSiteSeries[]): [number, number] {
    const rates = sites.flatMap((s) => [s.trueRate, ...s.pace.map((p) => p.rate)]).filter(Number.isFinite);
    const low = Math.max(0.01, Math.min(...rates) * 0.8);
    const high = Math.max(...rates) * 1.25;
    return [2 ** Math.floor(Math.log2(low)), 2 ** Math.ceil(Math.log2(high))];
}

/** 1-2-5 ticks inside [low, high]. */
function rateTicks(low: number, high: number): number[] {
    const ticks: number[] = [];
    for (let decade = 10 ** Math.floor(Math.log10(low)); decade <= high; decade *= 10)
        for (const m of [1, 2, 5]) if (m * decade >= low && m * decade <= high) ticks.push(m * decade);
    return ticks;
}

/** Where things go: the plot area and its two axes. */
interface Frame {
    x: (seconds: number) => number;
    y: (rate: number) => number;
    right: number;
    bottom: number;
    unpacedY: number;
    colour: (site: number) => string;
}

export function pacePlotSvg(plot: PacePlot): string {
    const [low, high] = rateBounds(plot.sites);
    const bottom = PLOT.top + PLOT.height;
    const right = WIDTH - PLOT.right;
    // Unpaced (Infinity) has no place on a rate axis: it gets a band of its own above the plot.
    const unpacedY = PLOT.top - 12;
    const frame: Frame = {
        x: (s) => PLOT.left + (s / Math.max(plot.seconds, 1e-9)) * (right - PLOT.left),
        y: (rate) => {
            if (!Number.isFinite(rate)) return unpacedY;
            const r = Math.min(high, Math.max(low, rate));
            return bottom - (Math.log(r / low) / Math.log(high / low)) * PLOT.height;
        },
        right,
        bottom,
        unpacedY,
        colour: (i) => COLOURS[i % COLOURS.length],
    };
    const rugTop = bottom + 44;
    const legendTop = rugTop + 4 + plot.sites.length * RUG_ROW + 20;
    const height = legendTop + plot.sites.length * LEGEND_ROW + 12;
    return [
        `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="sans-serif" font-size="11">`,
        `<rect width="100%" height="100%" fill="white"/>`,
        `<text x="${PLOT.left}" y="20" font-size="14" font-weight="bold">${esc(plot.title)}</text>`,
        `<text x="${PLOT.left}" y="38" fill="#555">${esc(plot.note)}</text>`,
        ...axes(frame, rateTicks(low, high), plot.seconds),
        ...plot.sites.flatMap((site, i) => siteLines(frame, site, frame.colour(i))),
        ...rug(frame, plot.sites, rugTop),
        ...legend(frame, plot.sites, legendTop),
        '</svg>',
        '',
    ].join('\n');
}

function axes(frame: Frame, rates: number[], seconds: number): string[] {
    const { x, y, right, bottom } = frame;
    const out = [
        `<text x="${PLOT.left - 8}" y="${frame.unpacedY + 4}" text-anchor="end" fill="#555">unpaced</text>`,
        `<line x1="${PLOT.left}" x2="${right}" y1="${frame.unpacedY}" y2="${frame.unpacedY}" stroke="#ddd"/>`,
    ];
    for (const tick of rates)
        out.push(
            `<line x1="${PLOT.left}" x2="${right}" y1="${f(y(tick))}" y2="${f(y(tick))}" stroke="#eee"/>`,
            `<text x="${PLOT.left - 8}" y="${f(y(tick) + 4)}" text-anchor="end">${tick}</text>`,
        );
    const step = niceStep(seconds);
    for (let s = 0; s <= seconds + 1e-9; s += step)
        out.push(`<text x="${f(x(s))}" y="${bottom + 16}" text-anchor="middle">${+s.toFixed(2)}</text>`);
    const middle = PLOT.top + PLOT.height / 2;
    out.push(
        `<rect x="${PLOT.left}" y="${PLOT.top}" width="${right - PLOT.left}" height="${PLOT.height}" fill="none" stroke="#999"/>`,
        `<text x="16" y="${middle}" transform="rotate(-90 16 ${middle})" text-anchor="middle">requests per second (log scale)</text>`,
        `<text x="${(PLOT.left + right) / 2}" y="${bottom + 32}" text-anchor="middle">time (s, simulated clock)</text>`,
    );
    return out;
}

/** The true rate (dashed), what the site accepted (thin) and the pace (thick, drawn last, on top). */
function siteLines(frame: Frame, site: PaceSiteSeries, colour: string): string[] {
    const { x, y } = frame;
    const out = [
        `<line x1="${PLOT.left}" x2="${frame.right}" y1="${f(y(site.trueRate))}" y2="${f(y(site.trueRate))}" stroke="${colour}" stroke-dasharray="6 4" opacity="0.8"/>`,
    ];
    if (site.accepted.length > 0)
        out.push(
            polyline(
                site.accepted.map((p) => [x(p.at), y(p.rate)]),
                colour,
                1,
                0.35,
            ),
        );
    out.push(
        polyline(
            stepPoints(site.pace, site.end).map((p) => [x(p.at), y(p.rate)]),
            colour,
            2,
            1,
        ),
    );
    return out;
}

/** Refusals and holds as a rug under the time axis, one row per site, so they never hide a pace line. */
function rug(frame: Frame, sites: PaceSiteSeries[], rugTop: number): string[] {
    const out = [
        `<text x="${PLOT.left}" y="${rugTop - 2}" fill="#555">refusals (ticks) and time held by the backoff clock (bars)</text>`,
    ];
    sites.forEach((site, i) => {
        const top = rugTop + 4 + i * RUG_ROW;
        const colour = frame.colour(i);
        out.push(`<text x="${PLOT.left - 8}" y="${top + 9}" text-anchor="end" fill="${colour}">s${i + 1}</text>`);
        for (const span of site.held) {
            // A wait may outlast the crawl: cut it at the axis.
            const [from, until] = [frame.x(span.from), Math.min(frame.right, frame.x(span.until))];
            out.push(
                `<rect x="${f(from)}" y="${top + 2}" width="${f(Math.max(1, until - from))}" height="${RUG_ROW - 4}" fill="${colour}" opacity="0.25"/>`,
            );
        }
        const ticks = site.refusals.map((s) => `M${f(frame.x(s))} ${top}v${RUG_ROW}`).join('');
        if (ticks) out.push(`<path d="${ticks}" stroke="${colour}" stroke-width="1.5"/>`);
    });
    return out;
}

function legend(frame: Frame, sites: PaceSiteSeries[], legendTop: number): string[] {
    const out = [
        `<text x="${PLOT.left}" y="${legendTop}" fill="#555">thick: the pace the manager set · dashed: the site's true rate · thin: answers accepted per second (last 2 s, or last 8 answers)</text>`,
    ];
    sites.forEach((site, i) => {
        const top = legendTop + (i + 1) * LEGEND_ROW;
        out.push(
            `<line x1="${PLOT.left}" x2="${PLOT.left + 24}" y1="${top - 4}" y2="${top - 4}" stroke="${frame.colour(i)}" stroke-width="2"/>`,
            `<text x="${PLOT.left + 32}" y="${top}">${esc(site.label)}</text>`,
        );
    });
    return out;
}

/** The pace as steps: each value holds until the next change, the last one until the end. */
function stepPoints(pace: { at: number; rate: number }[], end: number): { at: number; rate: number }[] {
    const points: { at: number; rate: number }[] = [];
    pace.forEach((p, i) => {
        points.push(p);
        points.push({ at: i + 1 < pace.length ? pace[i + 1].at : Math.max(p.at, end), rate: p.rate });
    });
    return points;
}

function polyline(points: [number, number][], colour: string, width: number, opacity: number): string {
    const list = points.map(([px, py]) => `${f(px)},${f(py)}`).join(' ');
    return `<polyline points="${list}" fill="none" stroke="${colour}" stroke-width="${width}" opacity="${opacity}" stroke-linejoin="round"/>`;
}

/** A tick spacing giving 5–12 labels on the time axis. */
function niceStep(seconds: number): number {
    for (const step of [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300]) if (seconds / step <= 12) return step;
    return 600;
}
