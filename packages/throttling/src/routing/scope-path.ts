/**
 * Path normalisation for endpoint scopes (`api.example.com/search`).
 *
 * A scope must pace every spelling of its path that the server reads as the same resource, or a
 * crawler (or a site's own links) can slip past it: `/%73earch` and `/search;jsessionid=1` reach the
 * same handler as `/search` on most servers. Configured prefixes and crawled paths both go through
 * {@link normalizeScopePath}, which is what makes them agree.
 *
 * Case is kept: RFC 3986 §6.2.2.1 makes paths case-sensitive, and most servers (Apache, nginx, every
 * object store) honour that. Case-insensitive servers (IIS, some Windows-hosted APIs) would let
 * `/SEARCH` escape a `/search` scope; folding case here would instead merge distinct endpoints on
 * every other server, and there is no way to tell the two apart from a URL. A user facing IIS can
 * list both spellings.
 */

// RFC 3986 §2.3: percent-encodings of these are equivalent to the characters themselves (§6.2.2.2).
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

// What may appear literally in a normalised path: unreserved, sub-delims, ':', '@', '/' and '%'
// (escapes, or a stray '%' kept as it is). Anything else is percent-encoded as UTF-8, so that
// `/bücher` in the configuration and `/b%C3%BCcher` from WHATWG URL agree.
const NOT_PATH_CHARS = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]+/g;

// A path needing none of the steps below is already normal: no escapes, parameters, backslashes,
// foreign characters, empty or dot segments, and no trailing slash. Most crawled paths take this exit.
const NEEDS_WORK = /[^A-Za-z0-9\-._~!$&'()*+,=:@/]|\/\/|\/\.\.?(?:\/|$)|.\/$|^[^/]/;

const HEX_PAIR = /^[0-9A-Fa-f]{2}$/;

const utf8 = new TextEncoder();

/**
 * Canonical form of a URL path for matching against endpoint scopes. Never throws.
 *
 * - Percent-encoded unreserved characters are decoded (`%73` → `s`); other escapes are uppercased
 *   (`%2f` → `%2F`) and never decoded, so an encoded slash stays inside its segment.
 * - Path parameters are dropped from each segment (`/search;jsessionid=1` → `/search`), as servlet
 *   containers do before routing; `..;x` is then a dot segment, as it is for them.
 * - Dot segments are resolved (RFC 3986 §5.2.4), including encoded ones (`%2e%2e`); `..` above the
 *   root stays at the root.
 * - Empty segments collapse (`//search` → `/search`) and a trailing slash is dropped (`/search/` →
 *   `/search`): servers and frameworks commonly route both to one handler, and erring towards one
 *   scope paces more, never less.
 * - `\` counts as `/`, as WHATWG URL reads it in http(s) URLs; characters outside RFC 3986 are
 *   percent-encoded as UTF-8 (a lone surrogate as U+FFFD).
 * - A malformed escape (`%zz`, a trailing `%`) is kept as it is. An escape within the two characters
 *   after it is left encoded, so that decoding cannot turn `%%341` into a new escape `%41`: that keeps
 *   the function idempotent.
 *
 * @param pathname A path as `URL.pathname` gives it, or as written in a scope key.
 * @returns A path starting with `/`, without a trailing slash unless it is the root.
 */
export function normalizeScopePath(pathname: string): string {
    const raw = typeof pathname === 'string' ? pathname : '';
    if (!NEEDS_WORK.test(raw) && raw.length > 0) return raw;
    const text = raw.replace(/\\/g, '/').replace(NOT_PATH_CHARS, encodeUtf8);
    const segments: string[] = [];
    for (const part of text.split('/')) {
        const semicolon = part.indexOf(';');
        const segment = normalizeEscapes(semicolon === -1 ? part : part.slice(0, semicolon));
        if (segment === '' || segment === '.') continue;
        if (segment === '..') segments.pop();
        else segments.push(segment);
    }
    return `/${segments.join('/')}`;
}

/**
 * The longest of `prefixes` that covers `pathname` segment by segment (`/search` covers `/search`
 * and `/search/x`, not `/searchlight`), comparing both in their {@link normalizeScopePath} form.
 * Never throws.
 *
 * @param prefixes Configured path prefixes, in any spelling.
 * @param pathname The path of a request (e.g. `new URL(url).pathname`).
 * @returns The matching prefix exactly as given in `prefixes`, or undefined. Among prefixes with the
 *   same normal form, the first given wins.
 */
export function matchPathScope(prefixes: readonly string[], pathname: string): string | undefined {
    const path = normalizeScopePath(pathname);
    let best: string | undefined;
    let bestLength = -1;
    for (const prefix of prefixes) {
        const normal = normalizedPrefix(prefix);
        if (normal.length > bestLength && covers(normal, path)) {
            best = prefix;
            bestLength = normal.length;
        }
    }
    return best;
}

function covers(prefix: string, path: string): boolean {
    if (prefix === '/') return true;
    return path.startsWith(prefix) && (path.length === prefix.length || path[prefix.length] === '/');
}

// Prefixes come from configuration and are matched on every request: remember their normal forms.
// Bounded so that a caller passing ever-new prefixes cannot grow it without limit.
const PREFIX_CACHE_LIMIT = 1_000;
const prefixCache = new Map<string, string>();

function normalizedPrefix(prefix: string): string {
    let normal = prefixCache.get(prefix);
    if (normal === undefined) {
        normal = normalizeScopePath(prefix);
        if (prefixCache.size >= PREFIX_CACHE_LIMIT) prefixCache.clear();
        prefixCache.set(prefix, normal);
    }
    return normal;
}

function normalizeEscapes(segment: string): string {
    if (!segment.includes('%')) return segment;
    let out = '';
    // Escapes starting at or before this index follow a stray '%' closely enough to complete it if decoded.
    let guardedUntil = -1;
    for (let i = 0; i < segment.length;) {
        const hex = segment.slice(i + 1, i + 3);
        if (segment[i] !== '%') {
            out += segment[i];
            i += 1;
        } else if (!HEX_PAIR.test(hex)) {
            out += '%';
            guardedUntil = i + 2;
            i += 1;
        } else {
            const char = String.fromCharCode(parseInt(hex, 16));
            out += i > guardedUntil && UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
            i += 3;
        }
    }
    return out;
}

function encodeUtf8(run: string): string {
    let out = '';
    for (const byte of utf8.encode(run)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    return out;
}
