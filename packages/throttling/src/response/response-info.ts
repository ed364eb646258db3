import type { ResponseHeaders } from './rate-limit-headers';

/**
 * A response as any Crawlee crawler exposes it: got's `IncomingMessage` (`statusCode`, `headers`),
 * Playwright's and Puppeteer's (`status()`, `headers()`), or a fetch `Response` (`status`,
 * `headers.get`/`forEach`).
 */
export type ResponseLike =
    | { statusCode?: number; headers?: ResponseHeaders }
    | { status: () => number; headers: () => Record<string, string> }
    | { status: number; headers: { forEach(cb: (value: string, key: string) => void): void } };

/** Status and lower-cased headers of a response, whatever library produced it. */
export interface ResponseInfo {
    statusCode: number;
    headers: ResponseHeaders;
    /** The URL that answered (after redirects), when the response says. */
    url?: string;
}

export function readResponse(response: unknown): ResponseInfo | undefined {
    if (typeof response !== 'object' || response === null) return undefined;
    const r = response as Record<string, unknown>;
    const statusCode =
        typeof r.statusCode === 'number'
            ? r.statusCode
            : typeof r.status === 'function'
              ? (r.status as () => number).call(response)
              : r.status;
    if (typeof statusCode !== 'number') return undefined;
    const raw = typeof r.headers === 'function' ? (r.headers as () => unknown).call(response) : r.headers;
    const headers: ResponseHeaders = {};
    if (raw && typeof (raw as { forEach?: unknown }).forEach === 'function' && !Array.isArray(raw)) {
        (raw as { forEach(cb: (value: string, key: string) => void): void }).forEach((value, key) => {
            headers[key.toLowerCase()] = value;
        });
    } else if (raw && typeof raw === 'object') {
        for (const [key, value] of Object.entries(raw as Record<string, string | string[] | undefined>))
            headers[key.toLowerCase()] = value;
    }
    const url = typeof r.url === 'function' ? (r.url as () => unknown).call(response) : r.url;
    return { statusCode, headers, ...(typeof url === 'string' && url !== '' ? { url } : {}) };
}
