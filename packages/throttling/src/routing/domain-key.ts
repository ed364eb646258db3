import { isIP, isIPv4, isIPv6 } from 'node:net';

import { getDomain } from 'tldts';

import { InvalidDomainError, describeValue } from '../core/errors';

export { InvalidDomainError } from '../core/errors';

/**
 * How requests are grouped for throttling.
 *
 * - `'hostname'`: every host is throttled on its own (`www.example.com` and `api.example.com` are separate).
 * - `'registrableDomain'`: hosts sharing a registrable domain ("eTLD+1", e.g. `example.com`, `a.co.uk`) share
 *   one throttle. IP addresses and hosts without a registrable domain (`localhost`) stay per hostname.
 */
export type ThrottleBy = 'hostname' | 'registrableDomain';

const ALLOWED_FORMS =
    'expected a hostname such as "example.com", "bücher.example", "127.0.0.1" or "[::1]" ' +
    '(optionally with a port, which is ignored) or a full URL such as "https://example.com/"';

// Labels as they appear on the web rather than strict LDH: underscores and edge hyphens exist on real hosts
// and WHATWG URL accepts them, so rejecting them in config would make such hosts impossible to configure.
const LABEL = /^[a-z0-9_-]{1,63}$/;
const MAX_HOSTNAME_LENGTH = 253;

// Matches "scheme://" so that a full URL in the config is parsed as a URL rather than as "host:port".
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

// A bare host may carry a port but nothing that belongs to a path, query, fragment or userinfo. Accepting
// "example.com/blog" in `domains` would suggest path-scoped throttling; endpoints are scoped in `scopes` instead.
const NOT_IN_BARE_HOST = /[/?#@\\]/;

const WHITESPACE = /\s/;

// http and https share one host parser, so any special scheme gives the same hostname for the same raw host.
const SPECIAL_SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:', 'ftp:', 'file:']);

// Private PSL entries (github.io, blogspot.com, herokuapp.com, ...) are boundaries between independent sites
// owned by different people; browsers treat them as separate sites too. Grouping all of them into one throttle
// would let a single tenant's 429 stall thousands of unrelated sites. tldts also validates hostnames by default,
// which would refuse hosts WHATWG URL accepts (e.g. with "_") and make such keys fall back inconsistently;
// our input is already a WHATWG-parsed hostname, so both validation and extraction are skipped.
const TLDTS_OPTIONS = {
    allowPrivateDomains: true,
    detectIp: false,
    extractHostname: false,
    mixedInputs: false,
    validateHostname: false,
} as const;

/**
 * Normalises a domain as a user writes it in configuration into the canonical hostname used for throttling.
 *
 * Accepts bare hostnames in any case, with a trailing root dot, in Unicode or punycode, IPv4 and IPv6 addresses
 * (with or without brackets), `host:port` (the port is dropped because politeness is per host, not per port),
 * and full URLs. The result is lowercase ASCII (punycode), without trailing dot, and IPv6 addresses are in
 * WHATWG's compressed form without brackets (`::1`).
 *
 * @param input A hostname, `host:port`, IP address or full URL.
 * @returns The canonical hostname, e.g. `Example.COM.` → `example.com`, `bücher.example` → `xn--bcher-kva.example`.
 * @throws {InvalidDomainError} For empty values, wildcards, whitespace, paths and anything WHATWG URL rejects.
 */
export function normalizeHostname(input: string): string {
    if (typeof input !== 'string') {
        throw new InvalidDomainError(input, `it must be a string; ${ALLOWED_FORMS}.`);
    }
    if (input.length === 0) {
        throw new InvalidDomainError(input, `it is empty; ${ALLOWED_FORMS}.`);
    }
    if (/^\.+$/.test(input)) {
        // Only dots: no label at all, which is not a wildcard either.
        throw new InvalidDomainError(input, `it has no label (only dots); ${ALLOWED_FORMS}.`);
    }
    if (input.includes('*') || input.startsWith('.')) {
        throw new InvalidDomainError(
            input,
            'wildcards are not supported. To throttle a domain together with all its subdomains, list the ' +
                `domain itself (e.g. "${wildcardBase(input)}") and set throttleBy: 'registrableDomain'.`,
        );
    }
    if (WHITESPACE.test(input)) {
        throw new InvalidDomainError(input, `it contains whitespace; ${ALLOWED_FORMS}.`);
    }

    let hostname: string | undefined;
    if (HAS_SCHEME.test(input)) {
        hostname = hostnameOfParsedUrl(tryParseUrl(input));
    } else if (NOT_IN_BARE_HOST.test(input)) {
        throw new InvalidDomainError(input, `it contains a path, query, fragment or credentials; ${ALLOWED_FORMS}.`);
    } else {
        // Bare IPv6 ("::1") would otherwise be read as host ":" + port; WHATWG only accepts it in brackets.
        const authority = isIPv6(input) ? `[${input}]` : input;
        hostname = hostnameOfParsedUrl(tryParseUrl(`http://${authority}/`));
    }

    if (hostname === undefined || !isPlausibleHostname(hostname)) {
        throw new InvalidDomainError(input, `it is not a valid hostname; ${ALLOWED_FORMS}.`);
    }
    return hostname;
}

/**
 * Maps a configured domain to its throttling key, exactly as {@link domainKeyOfUrl} maps URLs on that host.
 *
 * @param domain A configured domain in any form {@link normalizeHostname} accepts.
 * @param throttleBy The grouping mode.
 * @returns The key, e.g. `www.Example.com.` → `www.example.com` (hostname) or `example.com` (registrableDomain).
 * @throws {InvalidDomainError} If the domain is invalid.
 * @throws {TypeError} If `throttleBy` is not a known mode.
 */
export function domainKeyOfConfigured(domain: string, throttleBy: ThrottleBy): string {
    if (throttleBy !== 'hostname' && throttleBy !== 'registrableDomain') {
        throw new TypeError(
            `Invalid throttleBy ${describeValue(throttleBy)}: expected 'hostname' or 'registrableDomain'.`,
        );
    }
    return keyOfHostname(normalizeHostname(domain), throttleBy);
}

/**
 * Maps a request URL to its throttling key. Called for every request, so results are cached per raw host.
 *
 * Never throws: any `throttleBy` other than `'registrableDomain'` is treated as `'hostname'`.
 *
 * @param url An absolute URL.
 * @param throttleBy The grouping mode.
 * @returns The key, or `undefined` if the URL cannot be parsed or has no host (e.g. `data:` URLs).
 */
export function domainKeyOfUrl(url: string, throttleBy: ThrottleBy): string | undefined {
    if (typeof url !== 'string') return undefined;
    const cache = throttleBy === 'registrableDomain' ? registrableDomainCache : hostnameCache;

    // Fast path: for plain "http(s)://host[:port]..." URLs the key is a pure function of the raw host text,
    // so a cache hit skips WHATWG parsing and the PSL lookup entirely. Anything unusual takes the slow path.
    const match = FAST_URL.exec(url);
    if (match !== null) {
        const rawHost = match[1]!;
        const port = match[2];
        // An out-of-range port makes the whole URL invalid, whatever the host.
        if (port !== undefined && port.length > 0 && Number(port) > 65535) return undefined;
        const cached = cache.get(rawHost);
        if (cached !== undefined) return cached;
    }

    const hostname = hostnameOfParsedUrl(tryParseUrl(url));
    if (hostname === undefined) return undefined;
    const key = keyOfHostname(hostname, throttleBy === 'registrableDomain' ? 'registrableDomain' : 'hostname');
    if (match !== null) cache.set(match[1]!, key);
    return key;
}

// Scheme, then a host made only of characters that cannot start userinfo, a port, IPv6 or a path, then an
// optional numeric port, then the end of the authority. Tabs, newlines and leading spaces are stripped by
// WHATWG before parsing, so URLs containing them never match and take the slow path.
const FAST_URL = /^https?:\/\/([^/?#\\@:[\]\s%]+)(?::(\d*))?(?=[/?#\\]|$)/i;

/** Keeps at most `limit` entries, evicting the oldest insertion; cheaper than LRU on the hit path. */
class BoundedCache {
    private readonly entries = new Map<string, string>();

    constructor(private readonly limit: number) {}

    get(key: string): string | undefined {
        return this.entries.get(key);
    }

    set(key: string, value: string): void {
        if (this.entries.size >= this.limit) {
            const oldest = this.entries.keys().next();
            if (oldest.done !== true) this.entries.delete(oldest.value);
        }
        this.entries.set(key, value);
    }
}

// Large enough for the working set of hosts in a big crawl, small enough (~1-2 MB) to be irrelevant.
const CACHE_LIMIT = 10_000;
const hostnameCache = new BoundedCache(CACHE_LIMIT);
const registrableDomainCache = new BoundedCache(CACHE_LIMIT);

function tryParseUrl(input: string): URL | undefined {
    try {
        return new URL(input);
    } catch {
        return undefined;
    }
}

/**
 * The single place where WHATWG hostnames become canonical: both configuration and URLs go through it,
 * which is what makes them agree. WHATWG parsing has already lowercased, applied UTS #46 / punycode
 * (the same mapping as `url.domainToASCII`) and normalised IPv4/IPv6 forms.
 */
function hostnameOfParsedUrl(parsed: URL | undefined): string | undefined {
    if (parsed === undefined) return undefined;
    let hostname = parsed.hostname;
    if (!SPECIAL_SCHEMES.has(parsed.protocol) && hostname.length > 0) {
        // Non-special schemes keep an opaque, case-preserved, percent-encoded host; re-parse it as http so that
        // "foo://Bücher.example" and "http://bücher.example" agree.
        const reparsed = tryParseUrl(`http://${parsed.host}/`);
        if (reparsed === undefined) return undefined;
        hostname = reparsed.hostname;
    }
    if (hostname.startsWith('[')) return hostname.slice(1, -1);
    // "example.com." is the fully qualified spelling of "example.com": same host, same server.
    if (hostname.endsWith('.')) hostname = hostname.slice(0, -1);
    return hostname.length > 0 ? hostname : undefined;
}

function keyOfHostname(hostname: string, throttleBy: ThrottleBy): string {
    if (throttleBy === 'hostname') return hostname;
    // Addresses have no registrable domain; grouping by a numeric "suffix" would be meaningless.
    if (isIP(hostname) !== 0) return hostname;
    // null for single-label hosts (localhost) and for public suffixes themselves (github.io): keep the host.
    return getDomain(hostname, TLDTS_OPTIONS) ?? hostname;
}

function isPlausibleHostname(hostname: string): boolean {
    if (isIPv6(hostname) || isIPv4(hostname)) return true;
    if (hostname.length > MAX_HOSTNAME_LENGTH) return false;
    return hostname.split('.').every((label) => LABEL.test(label));
}

function wildcardBase(input: string): string {
    const base = input.replace(/^[*.]+/, '');
    return base.length > 0 && !base.includes('*') ? base : 'example.com';
}
