import { isIpScope, parseIpScopeKey } from '../ip/ip-address';
import { normalizeHostname } from '../routing/domain-key';
import { normalizeScopePath } from '../routing/scope-path';

/** A parsed `scopes` key: a hostname, optionally with a path prefix. */
export interface ScopeKey {
    /** The key as normalised: `host` or `host/path-prefix`. */
    key: string;
    host: string;
    /** Path prefix starting with `/`, or undefined for a whole host. */
    pathPrefix?: string;
}

/**
 * Parses a `scopes` key (`example.com`, `api.example.com/search`, `@budget`, `ip:203.0.113.7`). Throws a message naming the
 * key and the allowed forms when it is malformed.
 */
export function parseScopeKey(raw: string): ScopeKey {
    const allowed =
        "a hostname ('api.example.com'), a hostname with a path prefix ('api.example.com/search'), a named scope ('@budget') or an address ('ip:203.0.113.7')";
    if (typeof raw === 'string' && /^@[\w.:-]+$/.test(raw)) return { key: raw, host: raw };
    if (typeof raw === 'string' && isIpScope(raw)) {
        const key = parseIpScopeKey(raw);
        return { key, host: key };
    }
    if (typeof raw !== 'string' || raw.trim() !== raw || raw === '')
        throw new Error(`scope key ${JSON.stringify(raw)} is not valid: use ${allowed}`);
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw))
        throw new Error(`scope key ${JSON.stringify(raw)} must not have a scheme: use ${allowed}`);
    const slash = raw.indexOf('/');
    const hostPart = slash === -1 ? raw : raw.slice(0, slash);
    const pathPrefix = slash === -1 ? undefined : scopePathPrefix(raw, raw.slice(slash), allowed);
    let host: string;
    try {
        host = normalizeHostname(hostPart);
    } catch (error) {
        throw new Error(`scope key ${JSON.stringify(raw)} is not valid: ${(error as Error).message}`);
    }
    return { key: pathPrefix ? `${host}${pathPrefix}` : host, host, pathPrefix };
}

/**
 * The path prefix of a scope key in the form crawled paths are matched in (see `normalizeScopePath`),
 * so `/%73earch/` and `/search` name one scope; undefined when it resolves to the root (the whole host).
 */
function scopePathPrefix(raw: string, prefix: string, allowed: string): string | undefined {
    // eslint-disable-next-line no-control-regex
    if (/[?#\s\u0000-\u001f\u007f]/.test(prefix))
        throw new Error(
            `scope key ${JSON.stringify(raw)} has a path prefix with a query ('?'), fragment ('#'), whitespace or control character: use ${allowed}`,
        );
    // Servers route `/x;v=1` as `/x`, and requests are matched without parameters: such a key could never
    // narrow the scope the user meant to narrow.
    if (/;/.test(prefix))
        throw new Error(
            `scope key ${JSON.stringify(raw)} has path parameters (';'), which are ignored when requests are matched: use ${allowed}`,
        );
    const normal = normalizeScopePath(prefix);
    return normal === '/' ? undefined : normal;
}
