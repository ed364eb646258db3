import { sampleAt, sparkline } from './heap-trend';
import { mdTable } from './markdown';
import type { SoakResult } from './soak';

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const mark = (ok: boolean) => (ok ? '✅' : '❌');

/** Heap growth in the second half beyond what a bare queue retains for the requests made then, MB per minute. */
export function unexplainedSlope(r: SoakResult): number {
    const halfMinutes = r.wallMs / 2 / 60_000;
    const storageMbPerMin = (r.secondHalfEnqueued * r.bareQueueBytesPerRequest) / 2 ** 20 / halfMinutes;
    return r.heapSlopeSecondHalf - storageMbPerMin;
}

export function b6Section(r: SoakResult): string {
    const o = r.options;
    const l = r.ledger;
    const heapAt = [0.1, 0.5, 0.9, 1].map((f) => sampleAt(r.heap, f));
    const heapCell = heapAt.map((s) => (s ? mb(s.heapUsed) : 'n/a')).join(' / ');
    const unexplained = unexplainedSlope(r);
    const rows = [
        ['wall time', `${(r.wallMs / 1000).toFixed(1)} s${r.timedOut ? ' ⏱ cap' : ''}`],
        ['requests at the server (robots.txt excluded)', String(r.server.requests)],
        ['refused (429/503) / cut by a reset', `${r.server.refusals} / ${r.server.resets}`],
        ['URLs enqueued (start + discovered) / seen by the server', `${l.enqueued} / ${l.seen}`],
        [
            'handled / failed (crawler statistics)',
            `${l.handled} / ${l.failed} (${r.crawlerFinished} / ${r.crawlerFailed})`,
        ],
        ['**requests lost**', `**${l.lost}**`],
        [
            'handled twice / handled and failed / seen but never enqueued',
            `${l.handledTwice} / ${l.handledAndFailed} / ${l.seenNotEnqueued}`,
        ],
        ['heap after GC at 10 / 50 / 90 / 100 %', heapCell],
        ['heap over time', `\`${sparkline(r.heap.map((s) => s.heapUsed))}\` (${r.heap.length} samples)`],
        ['heap slope, second half', `${r.heapSlopeSecondHalf.toFixed(2)} MB/min`],
        [
            'of which storage (bare queue retains ' + `${Math.round(r.bareQueueBytesPerRequest)} B/request)`,
            `${(r.heapSlopeSecondHalf - unexplained).toFixed(2)} MB/min (${r.secondHalfEnqueued} URLs enqueued, ${r.secondHalfRequests} requests)`,
        ],
        [
            'event-loop lag p50 / p99 / max',
            `${r.lagP50Ms.toFixed(1)} / ${r.lagP99Ms.toFixed(1)} / ${r.lagMaxMs.toFixed(1)} ms`,
        ],
    ];
    return [
        '## B6 — soak',
        '',
        `${o.sites} sites, ${o.latencyMs} ms latency: ${o.unlimitedSites} unlimited with ${o.unlimitedPages + 1} pages each (\`/\` and \`/page/N\`), ` +
            `${o.sites - o.unlimitedSites} with ${o.pages + 1} pages limited to ${o.rate} req/s (burst ${o.burst}) in "on" spells of ${o.onMs / 1000} s ` +
            `alternating with ${o.offMs / 1000} s unlimited (staggered per site; half refuse with 429 + \`Retry-After\`, half with 503 and no header). ` +
            `${(o.resetShare * 100).toFixed(1)} % of page responses are cut off mid-body by a TCP reset (seeded). ` +
            "HttpCrawler with `ThrottlingRequestManager({ domains: 'all' })` attached (defaults), started on two sites' `/`, " +
            'discovering the rest through links. A URL is lost when it was enqueued or reached the server but was neither handled nor failed. ' +
            `Heap is heapUsed after a forced full GC every ${o.sampleEveryMs / 1000} s (the server's log is folded into fixed-size counters first, ` +
            'so the bookkeeping does not grow). Event-loop lag is `monitorEventLoopDelay` (10 ms resolution) minus that interval, paused during those GCs.',
        '',
        mdTable(['measure', 'value'], rows, ['l', 'r']),
        '',
        'Targets:',
        `- 0 requests lost: ${mark(l.lost === 0 && !r.timedOut)} ${l.lost}`,
        `- heap levels off (second-half growth beyond storage ≤ 1 MB/min): ${mark(unexplained <= 1)} ${unexplained.toFixed(2)} MB/min`,
    ].join('\n');
}
