import type { Readable } from 'node:stream';

import { fetchWithBoundedBody } from './fetch-with-bounded-body';
import type { RobotsFetcher } from '../options/robots-fetcher';
import { ROBOTS_TXT_MAX_BYTES } from './robots-crawl-delay';

/** The streaming half of Crawlee 3.x's `BaseHttpClient` (`stream()`), which the robots.txt fetch uses. */
export interface StreamingHttpClient {
    stream(request: {
        url: string;
        method: 'GET';
        headers: Record<string, string>;
        proxyUrl?: string;
        followRedirect: boolean;
        maxRedirects: number;
        throwHttpErrors: boolean;
        signal: AbortSignal;
        timeout: { request: number };
    }): Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined>; stream: Readable }>;
}

function canStream(client: unknown): client is StreamingHttpClient {
    return typeof (client as Partial<StreamingHttpClient> | undefined)?.stream === 'function';
}

/**
 * A {@link RobotsFetcher} over a crawler's HTTP client, with the default fetcher's rules: up to 5
 * redirects, no retries, any status resolved, body streamed and cut at 500 KiB or at the time limit.
 *
 * Undefined when the client cannot stream (none, or one with only `sendRequest`): `sendRequest`
 * buffers the whole decompressed body before we could cut it, so the caller should fall back to the
 * default streaming fetcher rather than let a gzip bomb through.
 */
export function robotsFetcherOfHttpClient(client: unknown): RobotsFetcher | undefined {
    if (!canStream(client)) return undefined;
    return async (robotsUrl, { userAgent, proxyUrl, timeoutMs }) =>
        fetchWithBoundedBody(
            async (signal) => {
                const response = await client.stream({
                    url: robotsUrl,
                    method: 'GET',
                    headers: userAgent === undefined ? {} : { 'user-agent': userAgent },
                    proxyUrl,
                    followRedirect: true,
                    maxRedirects: 5,
                    throwHttpErrors: false,
                    signal,
                    // Backstop for a client that ignores `signal`. Our deadline was armed first with the
                    // same length, so it fires first and keeps the partial body a client timeout would fail.
                    timeout: { request: timeoutMs },
                });
                return { statusCode: response.statusCode, headers: response.headers, stream: response.stream };
            },
            { maxBytes: ROBOTS_TXT_MAX_BYTES, timeoutMs },
        );
}
