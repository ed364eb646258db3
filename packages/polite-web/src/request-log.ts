/** One request as the server saw it. */
export interface LogEntry {
    /** Normalised hostname the request was routed by (unknown hosts are logged too). */
    readonly site: string;
    /** Path and query as requested, e.g. `/page/3`. */
    readonly path: string;
    /** Arrival time, epoch ms from the web's clock. */
    readonly time: number;
    /** Status the server answered with. */
    readonly status: number;
    /**
     * Page requests of this site in flight at arrival, this one included
     * (robots.txt is not counted as in flight; for a robots.txt entry this is the page requests already in flight).
     */
    readonly inFlightAtArrival: number;
    /**
     * Set when the site cut this response off with a connection reset (`connectionResets`): `status` is
     * what was being sent, but the client got no complete answer.
     */
    readonly reset?: true;
    /**
     * Set when the site refused the request (over its rate or concurrency limit), whatever the status
     * of the refusal (a 430, or a 200 "slow down" page, counts too).
     */
    readonly refused?: true;
    /**
     * When the response was finished or abandoned, epoch ms from the web's clock (unset while it is being
     * answered): `respondedAt - time` is the response time the client met.
     */
    respondedAt?: number;
    /** The `Retry-After` the refusal carried, when it had one (an upstream site's server's, or the site's own). */
    readonly retryAfter?: string;
    /** The sender's `x-crawler-process` header, when it sent one (which of several crawler processes). */
    readonly client?: string;
}

/** Whether a logged path is the robots.txt file, which is neither rate limited nor scored. */
export function isRobotsPath(path: string): boolean {
    const q = path.indexOf('?');
    return (q === -1 ? path : path.slice(0, q)) === '/robots.txt';
}
