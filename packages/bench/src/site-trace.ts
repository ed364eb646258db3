import type { LogEntry } from '@crawlee-throttling/polite-web';
import type { ThrottlingRequestManager } from 'crawlee-throttling';

/** Environment variable naming a host whose crawl by the throttler B5 traces to stderr. */
export const TRACE_ENV = 'B5_TRACE';

/**
 * Traces one site of a B5 run, to see why it was refused: every change of its learned pace, slots
 * and backoff while the crawl runs (sampled every 10 ms), then its arrivals, each with the requests
 * in flight at it and, for a refusal, the `Retry-After` it named. Times are seconds from the start.
 * Returns the function that stops sampling and prints the arrivals in `log()`.
 */
export function traceSite(
    throttler: ThrottlingRequestManager,
    host: string,
    log: () => readonly LogEntry[],
): () => void {
    const start = Date.now();
    const at = (ms: number) => ((ms - start) / 1000).toFixed(2);
    let last = '';
    const timer = setInterval(() => {
        const d = throttler.snapshot().find((x) => x.domain === host);
        if (!d) return;
        const ramp = d.rampup;
        const line = `pace ${ramp?.rate.toFixed(2)} safe ${ramp?.safeRate.toFixed(2)} refused ${ramp?.unsafeRate.toFixed(2)} slots ${d.concurrencyLimit} backoff until ${d.backoffUntil ? at(d.backoffUntil) : '-'}`;
        if (line !== last) console.error(`${at(Date.now())} ${host} ${line}`);
        last = line;
    }, 10);
    return () => {
        clearInterval(timer);
        const arrivals = log().filter((e) => e.site === host);
        const refused = (e: LogEntry) => e.refused === true || e.status === 429 || e.status === 503;
        const text = arrivals.map(
            (e) => `${at(e.time)}${refused(e) ? `R(${e.retryAfter ?? ''})` : ''}/${e.inFlightAtArrival}`,
        );
        console.error(`${host} arrivals (R: refused, /: in flight): ${text.join(' ')}`);
    };
}
