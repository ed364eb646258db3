import type { IncomingMessage } from 'node:http';
import { normalizeHost } from './site-options';

/** Which site and path a request is for. */
export interface RequestTarget {
    /** Normalised hostname, '' when the request names none. */
    host: string;
    /** Path plus query. */
    path: string;
    /** Path without query, used for routing. */
    pathname: string;
    /** The `x-crawler-process` header, when a crawler process labels its requests (several processes, one site). */
    client?: string;
}

/** Header by which a crawler process names itself, so the log can say which process sent a request. */
export const CLIENT_HEADER = 'x-crawler-process';

function clientOf(req: IncomingMessage): { client?: string } {
    const value = req.headers[CLIENT_HEADER];
    const client = Array.isArray(value) ? value[0] : value;
    return client ? { client } : {};
}

const ABSOLUTE_FORM = /^[a-z][a-z\d+.-]*:\/\//i;

/**
 * Reads the target of a request in origin form (`GET /p` + `Host:`) or in the absolute form an HTTP
 * forward proxy receives (`GET http://host/p`). For absolute form the request line wins over `Host`,
 * as RFC 9112 §3.2.2 requires.
 */
export function requestTarget(req: IncomingMessage): RequestTarget {
    const raw = req.url ?? '/';
    const absolute = ABSOLUTE_FORM.test(raw);
    const hostHeader = req.headers.host;
    let url: URL;
    try {
        // Concatenate rather than resolve against a base: a path like `//other/x` must stay a path.
        url = absolute
            ? new URL(raw)
            : new URL(`http://${hostHeader ?? 'invalid.invalid'}${raw.startsWith('/') ? '' : '/'}${raw}`);
    } catch {
        return { host: '', path: raw, pathname: raw, ...clientOf(req) };
    }
    const host = absolute || hostHeader ? normalizeHost(url.hostname) : '';
    return { host, path: url.pathname + url.search, pathname: url.pathname, ...clientOf(req) };
}
