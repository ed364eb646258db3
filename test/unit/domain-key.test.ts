import { domainToASCII } from 'node:url';

import {
    domainKeyOfConfigured,
    domainKeyOfUrl,
    InvalidDomainError,
    normalizeHostname,
    type ThrottleBy,
} from '../../packages/throttling/src/routing/domain-key';
import { ThrottlingError } from 'crawlee-throttling';

const MODES: ThrottleBy[] = ['hostname', 'registrableDomain'];

function thrown(fn: () => unknown): unknown {
    try {
        fn();
    } catch (error) {
        return error;
    }
    throw new Error('expected the call to throw');
}

describe('normalizeHostname', () => {
    it.each([
        ['Example.COM', 'example.com'],
        ['example.com.', 'example.com'],
        ['WWW.Example.Com.', 'www.example.com'],
        ['bücher.example', 'xn--bcher-kva.example'],
        ['BÜCHER.example', 'xn--bcher-kva.example'],
        ['XN--BCHER-KVA.example', 'xn--bcher-kva.example'],
        ['example。com', 'example.com'],
        ['example.com:8080', 'example.com'],
        ['example.com.:8080', 'example.com'],
        ['127.0.0.1', '127.0.0.1'],
        ['127.0.0.1:3000', '127.0.0.1'],
        ['::1', '::1'],
        ['[::1]', '::1'],
        ['[::1]:8080', '::1'],
        ['0:0:0:0:0:0:0:1', '::1'],
        ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
        ['localhost', 'localhost'],
        ['LOCALHOST:3000', 'localhost'],
        ['my_host.example.com', 'my_host.example.com'],
        ['https://Example.com/path', 'example.com'],
        ['http://user:secret@WWW.Example.com:81/a?b#c', 'www.example.com'],
        ['https://[::1]:8443/', '::1'],
        ['https://bücher.example/', 'xn--bcher-kva.example'],
    ])('normalises %j to %j', (input, expected) => {
        expect(normalizeHostname(input)).toBe(expected);
    });

    it('produces the same punycode as url.domainToASCII', () => {
        for (const name of ['bücher.example', 'münchen.de', 'пример.рф', '例え.テスト']) {
            expect(normalizeHostname(name)).toBe(domainToASCII(name));
        }
    });

    it.each([
        ['', /empty/],
        [' ', /whitespace/],
        [' example.com', /whitespace/],
        ['example.com ', /whitespace/],
        ['exa mple.com', /whitespace/],
        ['example.com/path', /path/],
        ['user@example.com', /credentials/],
        ['example.com?x', /path, query/],
        ['a!b.com', /not a valid hostname/],
        ['example..com', /not a valid hostname/],
        [`${'a'.repeat(64)}.com`, /not a valid hostname/],
        ['example.com:99999', /not a valid hostname/],
        ['example.com:abc', /not a valid hostname/],
        ['https://', /not a valid hostname/],
        ['file:///etc/hosts', /not a valid hostname/],
        ['data:text/plain,hi', /path/],
        ['[::1', /not a valid hostname/],
    ])('rejects %j', (input, reason) => {
        const error = thrown(() => normalizeHostname(input));
        expect(error).toBeInstanceOf(InvalidDomainError);
        expect((error as Error).message).toMatch(reason);
        // The message must name the value and say what is accepted.
        expect((error as Error).message).toContain(JSON.stringify(input));
        expect((error as Error).message).toMatch(/expected a hostname such as "example\.com"/);
    });

    it.each(['*.example.com', '*', '.example.com', 'www.*.example.com', 'https://*.example.com/'])(
        'rejects the wildcard %j and points to registrableDomain',
        (input) => {
            const error = thrown(() => normalizeHostname(input));
            expect(error).toBeInstanceOf(InvalidDomainError);
            expect((error as Error).message).toContain("throttleBy: 'registrableDomain'");
            expect((error as Error).message).toContain(JSON.stringify(input));
        },
    );

    it('suggests the base domain for a wildcard', () => {
        expect((thrown(() => normalizeHostname('*.shop.example.com')) as Error).message).toContain(
            '"shop.example.com"',
        );
    });

    it("throws one of the package's errors with a stable name, code and the rejected value", () => {
        const error = thrown(() => normalizeHostname('exa mple.com')) as InvalidDomainError;
        expect(error).toBeInstanceOf(ThrottlingError);
        expect(error.name).toBe('InvalidDomainError');
        expect(error.code).toBe('ERR_THROTTLING_INVALID_DOMAIN');
        expect(error.domain).toBe('exa mple.com');
        expect(String(error)).toMatch(/^InvalidDomainError: Invalid throttling domain "exa mple\.com"/);
    });

    it('rejects non-string values from untyped configuration', () => {
        for (const value of [undefined, null, 42, ['example.com']]) {
            const error = thrown(() => normalizeHostname(value as unknown as string));
            expect(error).toBeInstanceOf(InvalidDomainError);
            expect((error as Error).message).toMatch(/must be a string/);
        }
    });
});

describe('domainKeyOfUrl', () => {
    it.each([
        ['https://WWW.Example.COM./a', 'www.example.com', 'example.com'],
        ['https://www.a.co.uk/', 'www.a.co.uk', 'a.co.uk'],
        ['http://a.b.c.example.com/x', 'a.b.c.example.com', 'example.com'],
        ['http://xn--bcher-kva.example/', 'xn--bcher-kva.example', 'xn--bcher-kva.example'],
        ['http://www.bücher.example/', 'www.xn--bcher-kva.example', 'xn--bcher-kva.example'],
        ['http://[::1]:8080/', '::1', '::1'],
        ['http://[0:0::1]/', '::1', '::1'],
        ['http://[2001:db8::1]/', '2001:db8::1', '2001:db8::1'],
        ['http://192.168.1.10/', '192.168.1.10', '192.168.1.10'],
        ['http://127.1/', '127.0.0.1', '127.0.0.1'],
        ['http://localhost:3000/', 'localhost', 'localhost'],
        ['http://intranet/', 'intranet', 'intranet'],
        // Private PSL entries are separate sites: one tenant must not throttle all others.
        ['https://alice.github.io/', 'alice.github.io', 'alice.github.io'],
        ['https://github.io/', 'github.io', 'github.io'],
        ['http://user:pass@www.example.com:8080/', 'www.example.com', 'example.com'],
        ['http://user@www.example.com/', 'www.example.com', 'example.com'],
        ['http://www.example.com\\path', 'www.example.com', 'example.com'],
        ['http://www.exa\tmple.com/', 'www.example.com', 'example.com'],
        ['  https://www.example.com/  ', 'www.example.com', 'example.com'],
        ['HTTPS://WWW.EXAMPLE.COM', 'www.example.com', 'example.com'],
        ['wss://www.example.com/socket', 'www.example.com', 'example.com'],
        ['foo://WWW.Bücher.Example/x', 'www.xn--bcher-kva.example', 'xn--bcher-kva.example'],
        ['http://my_host.example.com/', 'my_host.example.com', 'example.com'],
    ])('maps %j to %j / %j', (url, byHostname, byRegistrableDomain) => {
        expect(domainKeyOfUrl(url, 'hostname')).toBe(byHostname);
        expect(domainKeyOfUrl(url, 'registrableDomain')).toBe(byRegistrableDomain);
        // A second call is served from the cache and must agree.
        expect(domainKeyOfUrl(url, 'hostname')).toBe(byHostname);
        expect(domainKeyOfUrl(url, 'registrableDomain')).toBe(byRegistrableDomain);
    });

    it('ignores ports', () => {
        for (const mode of MODES) {
            expect(domainKeyOfUrl('http://example.com:8080/', mode)).toBe('example.com');
            expect(domainKeyOfUrl('https://example.com/', mode)).toBe('example.com');
            expect(domainKeyOfUrl('https://example.com:443/', mode)).toBe('example.com');
        }
    });

    it.each([
        'not a url',
        '',
        '/relative/path',
        'data:text/plain,hi',
        'file:///etc/passwd',
        'mailto:someone@example.com',
        'javascript:void(0)',
        'http://example.com:65536/',
        'https://exa mple.com/',
        'http://./',
        'http://[::1/',
    ])('returns undefined for %j', (url) => {
        for (const mode of MODES) expect(domainKeyOfUrl(url, mode)).toBeUndefined();
    });

    it('returns undefined for non-strings instead of throwing', () => {
        for (const value of [undefined, null, 42, new URL('https://example.com/')]) {
            expect(domainKeyOfUrl(value as unknown as string, 'hostname')).toBeUndefined();
        }
    });

    it('does not throw for hosts that configuration would reject', () => {
        expect(domainKeyOfUrl('http://*.example.com/', 'hostname')).toBe('*.example.com');
        expect(domainKeyOfUrl('http://a!b.com/', 'registrableDomain')).toBe('a!b.com');
    });

    it('still rejects an out-of-range port when the host is already cached', () => {
        expect(domainKeyOfUrl('http://cached-port.example/', 'hostname')).toBe('cached-port.example');
        expect(domainKeyOfUrl('http://cached-port.example:70000/', 'hostname')).toBeUndefined();
        expect(domainKeyOfUrl('http://cached-port.example:8080/', 'hostname')).toBe('cached-port.example');
    });

    it('never caches credentials as if they were the host', () => {
        expect(domainKeyOfUrl('http://creds:80@www.example.net/', 'hostname')).toBe('www.example.net');
        expect(domainKeyOfUrl('http://creds@www.example.net/', 'hostname')).toBe('www.example.net');
        expect(domainKeyOfUrl('http://creds/', 'hostname')).toBe('creds');
        expect(domainKeyOfUrl('http://creds:80/', 'hostname')).toBe('creds');
    });

    it('keeps the two modes apart even for the same raw host', () => {
        const url = 'https://www.separate-caches.example.org/';
        expect(domainKeyOfUrl(url, 'hostname')).toBe('www.separate-caches.example.org');
        expect(domainKeyOfUrl(url, 'registrableDomain')).toBe('example.org');
        expect(domainKeyOfUrl(url, 'hostname')).toBe('www.separate-caches.example.org');
    });

    it('stays correct after the cache has evicted entries', () => {
        const count = 12_000;
        for (let i = 0; i < count; i++) {
            expect(domainKeyOfUrl(`https://www.site${i}.co.uk/`, 'registrableDomain')).toBe(`site${i}.co.uk`);
        }
        for (let i = 0; i < count; i += 997) {
            expect(domainKeyOfUrl(`https://www.site${i}.co.uk/p`, 'registrableDomain')).toBe(`site${i}.co.uk`);
        }
    });

    it('treats an unknown mode as hostname rather than throwing', () => {
        expect(domainKeyOfUrl('https://www.example.com/', 'bogus' as ThrottleBy)).toBe('www.example.com');
    });
});

describe('domainKeyOfConfigured', () => {
    it('applies registrableDomain to configured domains', () => {
        expect(domainKeyOfConfigured('www.Example.com.', 'registrableDomain')).toBe('example.com');
        expect(domainKeyOfConfigured('www.Example.com.', 'hostname')).toBe('www.example.com');
        expect(domainKeyOfConfigured('www.a.co.uk', 'registrableDomain')).toBe('a.co.uk');
    });

    it.each([
        ['bücher.example', 'http://xn--bcher-kva.example/'],
        ['xn--bcher-kva.example', 'http://bücher.example/'],
        ['Example.COM.', 'https://example.com/'],
        ['example.com:8080', 'https://example.com/'],
        ['https://Example.com/path', 'http://EXAMPLE.com:81/'],
        ['::1', 'http://[::1]:8080/'],
        ['[::1]', 'http://[::1]/'],
        ['[::1]:9000', 'http://[0:0:0:0:0:0:0:1]/'],
        ['127.0.0.1', 'http://127.0.0.1:3000/'],
        ['localhost', 'http://localhost:3000/'],
        ['www.a.co.uk', 'https://www.a.co.uk/'],
        ['github.io', 'https://github.io/'],
    ])('configured %j matches URL %j in both modes', (configured, url) => {
        for (const mode of MODES) {
            const key = domainKeyOfConfigured(configured, mode);
            expect(domainKeyOfUrl(url, mode)).toBe(key);
        }
    });

    it('groups subdomains with a configured domain only under registrableDomain', () => {
        const key = domainKeyOfConfigured('example.com', 'registrableDomain');
        expect(domainKeyOfUrl('https://shop.example.com/', 'registrableDomain')).toBe(key);
        expect(domainKeyOfUrl('https://shop.example.com/', 'hostname')).not.toBe(
            domainKeyOfConfigured('example.com', 'hostname'),
        );
    });

    it('keeps IP addresses and localhost per host under registrableDomain', () => {
        expect(domainKeyOfConfigured('10.0.0.1', 'registrableDomain')).toBe('10.0.0.1');
        expect(domainKeyOfConfigured('10.0.0.2', 'registrableDomain')).toBe('10.0.0.2');
        expect(domainKeyOfConfigured('[2001:db8::1]', 'registrableDomain')).toBe('2001:db8::1');
        expect(domainKeyOfConfigured('localhost', 'registrableDomain')).toBe('localhost');
    });

    it('throws InvalidDomainError for invalid domains', () => {
        for (const mode of MODES) {
            expect(() => domainKeyOfConfigured('*.example.com', mode)).toThrow(InvalidDomainError);
            expect(() => domainKeyOfConfigured('', mode)).toThrow(InvalidDomainError);
        }
    });

    it('throws a plain TypeError for an unknown mode', () => {
        const error = thrown(() => domainKeyOfConfigured('example.com', 'domain' as ThrottleBy));
        expect(error).toBeInstanceOf(TypeError);
        expect(error).not.toBeInstanceOf(InvalidDomainError);
        expect((error as Error).message).toMatch(/throttleBy "domain".*'hostname' or 'registrableDomain'/);
    });
});
