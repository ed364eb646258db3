/** Raw outcome of fetching one robots.txt file. */
export interface RobotsFetchResult {
    status: number;
    body: string;
    headers: Record<string, string | string[] | undefined>;
}

/**
 * Fetches a robots.txt URL. Must resolve for any HTTP status (including 4xx/5xx) and reject only when
 * no response was obtained (DNS, connection, timeout...), which the cache reports as `'unreachable'`.
 */
export type RobotsFetcher = (
    robotsUrl: string,
    options: { userAgent?: string; proxyUrl?: string; timeoutMs: number },
) => Promise<RobotsFetchResult>;
