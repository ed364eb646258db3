import fc from 'fast-check';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import { resolveThrottlingOptions } from '../../packages/throttling/src/config/resolve-options';
import { matchPathScope, normalizeScopePath } from '../../packages/throttling/src/routing/scope-path';

describe('normalizeScopePath', () => {
    test.each([
        ['/search', '/search'],
        ['/%73earch', '/search'],
        ['/%73%65%61%72%63%68', '/search'],
        ['/search;jsessionid=1', '/search'],
        ['/search;jsessionid=1/results;page=2', '/search/results'],
        ['/SEARCH', '/SEARCH'],
        ['//search', '/search'],
        ['/search//results', '/search/results'],
        ['/a/../search', '/search'],
        ['/a/./search', '/a/search'],
        ['/../../search', '/search'],
        ['/a/%2e%2E/search', '/search'],
        ['/a/..;x/search', '/search'],
        ['/search/', '/search'],
        ['/%2Fsearch', '/%2Fsearch'],
        ['/%2fsearch', '/%2Fsearch'],
        ['/a%3bb', '/a%3Bb'],
        ['/%7e%5F%2D%2e', '/~_-.'],
        ['/%zz', '/%zz'],
        ['/50%', '/50%'],
        ['/%%341', '/%%341'],
        ['/%4%31', '/%4%31'],
        ['/b\u00fccher', '/b%C3%BCcher'],
        ['/a b', '/a%20b'],
        ['/a\\b', '/a/b'],
        ['/\ud800', '/%EF%BF%BD'],
        ['search', '/search'],
        ['/', '/'],
        ['', '/'],
    ])('%j → %j', (input, expected) => {
        expect(normalizeScopePath(input)).toBe(expected);
    });

    test('agrees with WHATWG URL on the paths it produces', () => {
        expect(normalizeScopePath(new URL('http://h/b\u00fccher/%7Esearch').pathname)).toBe(
            normalizeScopePath('/b\u00fccher/~search'),
        );
    });
});

describe('matchPathScope', () => {
    const prefixes = ['/search', '/search/advanced', '/api/v1'];

    test.each([
        ['/search', '/search'],
        ['/search/.', '/search'],
        ['/%73earch', '/search'],
        ['/search;jsessionid=1', '/search'],
        ['//search', '/search'],
        ['/a/../search', '/search'],
        ['/search/', '/search'],
        ['/search/more', '/search'],
        ['/search/advanced', '/search/advanced'],
        ['/search/%61dvanced/x', '/search/advanced'],
        ['/searchlight', undefined],
        ['/SEARCH', undefined],
        ['/%2Fsearch', undefined],
        ['/search%2Fadvanced', undefined],
        ['/api/v1/items', '/api/v1'],
        ['/api/v10', undefined],
        ['/', undefined],
    ])('%j → %j', (path, expected) => {
        expect(matchPathScope(prefixes, path)).toBe(expected);
    });

    test('returns the prefix as given, however it is spelled', () => {
        expect(matchPathScope(['/%73earch/'], '/search;x=1/y')).toBe('/%73earch/');
        expect(matchPathScope(['/search/'], '/search')).toBe('/search/');
    });

    test('the longest prefix wins whatever the order', () => {
        expect(matchPathScope(['/a', '/a/b/c', '/a/b'], '/a/b/c/d')).toBe('/a/b/c');
    });
});

describe('configured scope keys', () => {
    test('a path prefix is stored in its normal form', () => {
        const options = resolveThrottlingOptions({
            domains: 'all',
            scopes: { 'a.com/%73earch/': { delaySecs: 1 }, 'b.com//x/./y': {} },
        });
        expect([...options.scopes.keys()]).toEqual(['a.com/search', 'b.com/x/y']);
        expect(options.scopes.get('a.com/search')?.scopeKey).toBe('a.com/search');
    });

    test('a scope configured with a trailing slash covers the path without it', () => {
        const manager = new ThrottlingRequestManager({ domains: 'all', scopes: { 'a.com/search/': {} } });
        expect(manager.domainKeyOf('https://a.com/search')).toBe('a.com/search');
        expect(manager.domainKeyOf('https://a.com/search/x')).toBe('a.com/search');
    });

    test('a prefix resolving to the root scopes the whole host', () => {
        const options = resolveThrottlingOptions({ domains: 'all', scopes: { 'a.com/x/..': {} } });
        expect([...options.scopes.keys()]).toEqual(['a.com']);
    });

    test.each([
        [{ 'a.com/search?q=1': {} }, /scope key "a.com\/search\?q=1" has a path prefix with a query/],
        [{ 'a.com/search#top': {} }, /scope key "a.com\/search#top" has a path prefix with .*fragment/],
        [{ 'a.com/se arch': {} }, /scope key "a.com\/se arch" has a path prefix with .*whitespace/],
        [{ 'a.com/se\u0000arch': {} }, /has a path prefix with .*control character/],
        [{ 'a.com/search;v=1': {} }, /scope key "a.com\/search;v=1" has path parameters/],
        [{ 'a.com/a/b': {}, 'a.com/a//b/': {} }, /"a.com\/a\/b" and "a.com\/a\/\/b\/" name the same scope a.com\/a\/b/],
    ])('%j is rejected with a clear message', (scopes, message) => {
        expect(() => new ThrottlingRequestManager({ domains: 'all', scopes })).toThrow(message);
    });
});

// Paths as a server sees them: segments of path characters, stray '%', escapes of any byte in
// either hex case, parameters, and characters outside RFC 3986 (lone surrogates included).
const segmentChar = fc.oneof(
    fc.constantFrom(...'aZ09-._~!$&()*+,=:@;%'.split('')),
    // Hex digits, bare and escaped, next to a stray '%' are where decoding could mint a new escape.
    fc.constantFrom(...'%%%0123456789abcdefABCDEF'.split('')),
    fc.constantFrom(...'0123456789abcdefABCDEF.'.split('')).map((c) => `%${c.charCodeAt(0).toString(16)}`),
    fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, '0')}`),
    fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`),
    fc.string({ unit: 'binary', maxLength: 2 }),
    fc.constantFrom('\ud800', '\udfff', '\ud83d\ude00'),
);
const segment = fc.array(segmentChar, { maxLength: 6 }).map((parts) => parts.join('').replace(/[/\\]/g, ''));
const anyPath = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc
        .array(fc.oneof(segment, fc.constantFrom('', '.', '..', '%2e', '.%2E')), { maxLength: 8 })
        .map((s) => `/${s.join('/')}`),
);
// What a server reads as "." or "..": params stripped, then percent-decoded.
const isDotSegment = (s: string) => /^(?:\.|%2e){1,2}$/i.test(s.split(';')[0]!);
const nonDotSegment = segment.filter((s) => !isDotSegment(s));

describe('properties', () => {
    test('normalizeScopePath never throws and always gives an absolute path without empty segments', () => {
        fc.assert(
            fc.property(anyPath, (path) => {
                const normal = normalizeScopePath(path);
                return normal === '/' || /^(?:\/[^/]+)+$/.test(normal);
            }),
            { numRuns: 2000 },
        );
    });

    test('normalizeScopePath is idempotent', () => {
        fc.assert(
            fc.property(anyPath, (path) => {
                const once = normalizeScopePath(path);
                return normalizeScopePath(once) === once;
            }),
            { numRuns: 5000 },
        );
    });

    test('matchPathScope never throws', () => {
        fc.assert(
            fc.property(fc.array(anyPath, { maxLength: 4 }), anyPath, (prefixes, path) => {
                const match = matchPathScope(prefixes, path);
                return match === undefined || prefixes.includes(match);
            }),
        );
    });

    test('a path made of a prefix and further segments always matches that prefix', () => {
        const prefix = fc.array(nonDotSegment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`);
        fc.assert(
            fc.property(prefix, fc.array(nonDotSegment, { maxLength: 4 }), fc.boolean(), (p, rest, slash) => {
                const path = [p, ...rest].join('/') + (slash ? '/' : '');
                return matchPathScope([p], path) === p;
            }),
            { numRuns: 2000 },
        );
    });

    test('any spelling of a path (escapes, parameters, extra slashes) matches the scope of its plain form', () => {
        const plainSegment = fc.stringMatching(/^[A-Za-z0-9\-_~]{1,8}$/);
        const respell = (seg: string, flags: readonly boolean[]) =>
            [...seg].map((c, i) => (flags[i % flags.length] ? `%${c.charCodeAt(0).toString(16)}` : c)).join('');
        fc.assert(
            fc.property(
                fc.array(plainSegment, { minLength: 1, maxLength: 4 }),
                fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
                fc.constantFrom('', ';jsessionid=1', ';a=b;c'),
                fc.constantFrom('/', '//'),
                (segments, flags, param, separator) => {
                    const plain = `/${segments.join('/')}`;
                    const spelled = separator + segments.map((s) => respell(s, flags) + param).join(separator);
                    return matchPathScope([plain, `${plain}-other`], spelled) === plain;
                },
            ),
            { numRuns: 1000 },
        );
    });
});
