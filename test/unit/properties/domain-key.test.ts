import { domainToASCII } from 'node:url';

import fc from 'fast-check';

import type { ThrottleBy } from 'crawlee-throttling';
import {
    domainKeyOfConfigured,
    domainKeyOfUrl,
    InvalidDomainError,
    normalizeHostname,
} from '../../../packages/throttling/src/routing/domain-key';
import { fcParams } from './fc-params';

const MODES: ThrottleBy[] = ['hostname', 'registrableDomain'];
const mode = fc.constantFrom(...MODES);

/** ASCII letters in random case: hostnames are case-insensitive (but "ß".toUpperCase() is "SS", another name). */
const randomCase = (text: string) =>
    fc
        .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
        .map((upper) => [...text].map((c, i) => (upper[i] && /[a-z]/.test(c) ? c.toUpperCase() : c)).join(''));

const unicodeLabel = fc
    .string({ unit: fc.constantFrom(...'abcxyzäöüßéñçøåæœ'), minLength: 1, maxLength: 12 })
    .filter((label) => /[^a-z]/.test(label));

/** A host as a user could write it, paired with the canonical form every spelling must map to. */
const host: fc.Arbitrary<{ written: string; canonical: string; ip6: boolean }> = fc.oneof(
    fc.domain().map((d) => ({ written: d, canonical: d, ip6: false })),
    fc
        .tuple(unicodeLabel, fc.domain())
        .map(([label, d]) => `${label}.${d}`)
        .map((d) => ({ written: d, canonical: domainToASCII(d), ip6: false }))
        .filter((h) => h.canonical !== ''),
    fc.ipV4().map((ip) => ({ written: ip, canonical: ip, ip6: false })),
    fc.ipV6().map((ip) => ({ written: ip, canonical: new URL(`http://[${ip}]/`).hostname.slice(1, -1), ip6: true })),
);

/** One of the many spellings of a host: case, punycode, trailing dot (not for IPs), brackets, port. */
const spelling = (h: { written: string; canonical: string; ip6: boolean }) =>
    fc
        .tuple(
            fc.constantFrom(h.written, h.canonical),
            fc.boolean(),
            fc.option(fc.integer({ min: 0, max: 65535 }), { nil: undefined }),
        )
        .chain(([text, dot, port]) =>
            randomCase(text).map((cased) => {
                const bare = h.ip6 ? `[${cased}]` : `${cased}${dot && !/^[\d.]+$/.test(cased) ? '.' : ''}`;
                return port === undefined ? bare : `${bare}:${port}`;
            }),
        );

const urlAround = (authority: string) =>
    fc
        .tuple(
            fc.constantFrom('http', 'https', 'HTTP', 'ws', 'ftp'),
            fc.constantFrom('', '/', '/a/b?q=1#f', '?x', '#y'),
        )
        .map(([scheme, rest]) => `${scheme}://${authority}${rest}`);

const junk = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.webUrl({ withQueryParameters: true, withFragments: true }),
    fc.string().map((s) => `http://${s}`),
    fc.constantFrom('data:text/plain,x', 'mailto:a@b.c', 'http://', 'http://[::1', 'http://a.com:99999/', 'file:///x'),
    fc.anything() as fc.Arbitrary<string>,
);

describe('domain keys: properties', () => {
    test('domainKeyOfUrl never throws; a key is non-empty, lowercase, without trailing dot or brackets', () => {
        fc.assert(
            fc.property(junk, mode, (url, by) => {
                const key = domainKeyOfUrl(url, by);
                if (key === undefined) return;
                expect(key.length).toBeGreaterThan(0);
                expect(key).toBe(key.toLowerCase());
                expect(key.endsWith('.') || key.startsWith('[')).toBe(false);
            }),
            fcParams(500),
        );
    });

    test('every spelling of a host, configured or in a URL, gets one key', () => {
        fc.assert(
            fc.property(
                host.chain((h) => fc.tuple(fc.constant(h), spelling(h), spelling(h).chain(urlAround))),
                mode,
                ([h, configured, url], by) => {
                    const expected = domainKeyOfConfigured(h.canonical, by);
                    expect(domainKeyOfConfigured(configured, by)).toBe(expected);
                    expect(domainKeyOfConfigured(url, by)).toBe(expected);
                    expect(domainKeyOfUrl(url, by)).toBe(expected);
                },
            ),
            fcParams(400),
        );
    });

    test('the cached fast path agrees with full parsing, whatever URL warmed the cache', () => {
        // A leading space is stripped by WHATWG but defeats the fast path, so it forces full parsing.
        const sameHostUrls = fc
            .tuple(host, fc.string({ maxLength: 6 }))
            .chain(([h]) => spelling(h).chain((authority) => fc.tuple(urlAround(authority), urlAround(authority))));
        const anyUrl = fc.oneof(
            sameHostUrls,
            fc.tuple(junk, junk),
            fc.tuple(
                fc.webUrl(),
                fc.webUrl().map((u) => u.replace(/^(\w+:\/\/[^/]*)/, '$1:99999')),
            ),
        );
        fc.assert(
            fc.property(anyUrl, mode, ([warm, url], by) => {
                domainKeyOfUrl(warm, by);
                const slow = typeof url === 'string' ? domainKeyOfUrl(` ${url}`, by) : undefined;
                expect(domainKeyOfUrl(url, by)).toBe(slow);
            }),
            fcParams(500),
        );
    });

    test('normalizeHostname accepts its own output unchanged, and rejects only with InvalidDomainError', () => {
        fc.assert(
            fc.property(fc.oneof(junk, host.chain(spelling)), (input) => {
                let hostname: string;
                try {
                    hostname = normalizeHostname(input);
                } catch (error) {
                    expect(error).toBeInstanceOf(InvalidDomainError);
                    return;
                }
                expect(normalizeHostname(hostname)).toBe(hostname);
            }),
            fcParams(500),
        );
    });

    test('a registrable-domain key is the host itself or one of its parent domains', () => {
        fc.assert(
            fc.property(host.chain(spelling).chain(urlAround), (url) => {
                const byHost = domainKeyOfUrl(url, 'hostname')!;
                const byDomain = domainKeyOfUrl(url, 'registrableDomain')!;
                expect(byDomain === byHost || byHost.endsWith(`.${byDomain}`)).toBe(true);
            }),
            fcParams(300),
        );
    });
});

describe('domain keys: regression, a value that cannot be turned into a string', () => {
    // Found by the normalizeHostname property: building the error message threw a bare TypeError.
    test.each([
        ['Object.create(null)', Object.create(null) as unknown],
        ['{ toString: 0 }', { toString: 0 }],
        [
            'a throwing toString',
            {
                toString: () => {
                    throw new Error('no');
                },
            },
        ],
    ])('%s is rejected with InvalidDomainError', (_name, value) => {
        expect(() => normalizeHostname(value as string)).toThrow(InvalidDomainError);
        expect(() => domainKeyOfConfigured(value as string, 'hostname')).toThrow(/must be a string/);
    });
});
