/**
 * `throttleBy: 'ip'`. Hosts that resolve to one address share the scope
 * `ip:<address>` beside their own; DNS answers are cached for their TTL; a DNS failure leaves a host
 * paced by its own scope. Every resolver here is a fake, and time is a ManualClock.
 */
import type { Request } from '@crawlee/core';
import { log } from '@crawlee/core';

import { ManualClock, ThrottlingOptionsError, ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { canonicalAddress, parseIpScopeKey, pickAddress } from '../../packages/throttling/src/ip/ip-address';
import type { DnsApi, ResolvedAddresses } from '../../packages/throttling/src/ip/ip-resolver';
import { createSystemIpResolver, LOOKUP_TTL_SECS } from '../../packages/throttling/src/ip/ip-resolver';
import {
    DNS_FAILURE_RETRY_MS,
    DNS_RESOLVE_TIMEOUT_MS,
    IpScopes,
    MIN_DNS_TTL_MS,
} from '../../packages/throttling/src/ip/ip-scopes';
import type { DomainQueue } from '../../packages/throttling/src/core/domain-queue';
import { memoryConfig } from '../helpers/storage';
import { withPort } from '../helpers/throttler-port';

/** Lets promise callbacks run (a settled fake answer reaches the cache). */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A resolver whose answers the test hands out one by one, counting the questions. */
function manualResolver() {
    const asked: string[] = [];
    const pending: { host: string; resolve(v: ResolvedAddresses): void; reject(e: unknown): void }[] = [];
    const resolver = (host: string) =>
        new Promise<ResolvedAddresses>((resolve, reject) => {
            asked.push(host);
            pending.push({ host, resolve, reject });
        });
    const answer = async (value: ResolvedAddresses | Error) => {
        const next = pending.shift()!;
        if (value instanceof Error) next.reject(value);
        else next.resolve(value);
        await flush();
    };
    return { resolver, asked, pending, answer };
}

function ipScopes(resolver: (host: string) => Promise<ResolvedAddresses>) {
    const clock = new ManualClock(0);
    const warnings: string[] = [];
    const released: [DomainQueue, number][] = [];
    const scopes = new IpScopes({
        resolver,
        now: () => clock.now(),
        warn: (m) => warnings.push(m),
        released: (entry, heldUntil) => released.push([entry, heldUntil]),
    });
    return { clock, warnings, released, scopes };
}

describe('IP addresses', () => {
    test('one spelling per address: IPv6 compressed and lower case, a mapped IPv4 as IPv4', () => {
        expect(canonicalAddress('2001:DB8:0:0::1')).toBe('2001:db8::1');
        expect(canonicalAddress('[::1]')).toBe('::1');
        expect(canonicalAddress('::ffff:127.0.0.1')).toBe('127.0.0.1');
        expect(canonicalAddress('10.0.0.1')).toBe('10.0.0.1');
        expect(canonicalAddress('example.com')).toBeUndefined();
        expect(canonicalAddress('1.2.3')).toBeUndefined();
    });

    test('a host stands for its lowest IPv4 address, whatever order the answer came in', () => {
        expect(pickAddress(['10.0.0.9', '10.0.0.10', '2001:db8::1'])).toBe('10.0.0.9');
        expect(pickAddress(['10.0.0.10', '10.0.0.9'])).toBe('10.0.0.9');
        expect(pickAddress(['2001:db8::2', '2001:db8::1'])).toBe('2001:db8::1');
        expect(pickAddress(['nonsense'])).toBeUndefined();
    });

    test('scope keys name an address, or say what is wrong', () => {
        expect(parseIpScopeKey('ip:[2001:DB8::1]')).toBe('ip:2001:db8::1');
        expect(() => parseIpScopeKey('ip:shop.example')).toThrow(/"ip:shop.example" names no IP address/);
    });
});

describe('IpScopes: the cache', () => {
    test('a literal address is its own scope, without a query', () => {
        const fake = manualResolver();
        const { scopes, clock } = ipScopes(fake.resolver);
        expect(scopes.scopeOf('http://127.0.0.1:8080/x', clock.now())).toBe('ip:127.0.0.1');
        expect(scopes.scopeOf('http://[::1]/x', clock.now())).toBe('ip:::1');
        expect(fake.asked).toEqual([]);
    });

    test('the first request waits for the answer, which is then kept for its TTL', async () => {
        const fake = manualResolver();
        const { scopes, clock } = ipScopes(fake.resolver);
        expect(scopes.scopeOf('https://a.example/1', clock.now())).toBe('pending');
        await flush();
        expect(fake.asked).toEqual(['a.example']);
        await fake.answer({ addresses: ['203.0.113.7'], ttlSecs: 30 });
        expect(scopes.scopeOf('https://a.example/2', clock.now())).toBe('ip:203.0.113.7');
        clock.advance(29_999);
        expect(scopes.scopeOf('https://A.example./3', clock.now())).toBe('ip:203.0.113.7');
        expect(fake.asked).toHaveLength(1);
    });

    test('a stale answer serves while the host is asked again; the new answer replaces it', async () => {
        const fake = manualResolver();
        const { scopes, clock } = ipScopes(fake.resolver);
        scopes.scopeOf('https://a.example/', clock.now());
        await flush();
        await fake.answer({ addresses: ['203.0.113.7'], ttlSecs: 30 });
        clock.advance(30_000);
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBe('ip:203.0.113.7');
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBe('ip:203.0.113.7');
        await flush();
        expect(fake.asked).toHaveLength(2); // one query, however many requests meanwhile
        await fake.answer({ addresses: ['198.51.100.1'], ttlSecs: 30 });
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBe('ip:198.51.100.1');
    });

    test('a TTL of 0 is kept a second, not asked per request', async () => {
        const fake = manualResolver();
        const { scopes, clock } = ipScopes(fake.resolver);
        scopes.scopeOf('https://a.example/', clock.now());
        await flush();
        await fake.answer({ addresses: ['203.0.113.7'], ttlSecs: 0 });
        clock.advance(MIN_DNS_TTL_MS - 1);
        scopes.scopeOf('https://a.example/', clock.now());
        await flush();
        expect(fake.asked).toHaveLength(1);
        clock.advance(1);
        scopes.scopeOf('https://a.example/', clock.now());
        await flush();
        expect(fake.asked).toHaveLength(2);
    });

    test('a failure: the host goes by itself, logged once, and is asked again a minute later', async () => {
        const fake = manualResolver();
        const { scopes, clock, warnings } = ipScopes(fake.resolver);
        scopes.scopeOf('https://a.example/', clock.now());
        await flush();
        await fake.answer(Object.assign(new Error('queryA ENOTFOUND'), { code: 'ENOTFOUND' }));
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBeUndefined();
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(/a\.example could not be resolved \(ENOTFOUND\).*paced by its host alone/);
        clock.advance(DNS_FAILURE_RETRY_MS - 1);
        scopes.scopeOf('https://a.example/', clock.now());
        await flush();
        expect(fake.asked).toHaveLength(1);
        clock.advance(1);
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBeUndefined();
        await flush();
        expect(fake.asked).toHaveLength(2);
        await fake.answer(new Error('still down'));
        expect(warnings).toHaveLength(1);
        clock.advance(DNS_FAILURE_RETRY_MS);
        scopes.scopeOf('https://a.example/', clock.now());
        await flush();
        await fake.answer({ addresses: ['203.0.113.7'], ttlSecs: 60 });
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBe('ip:203.0.113.7');
    });

    test('an answer with no address, or a resolver that throws at once, is a failure too', async () => {
        const { scopes, clock, warnings } = ipScopes(async () => ({ addresses: ['not an address'], ttlSecs: 5 }));
        scopes.scopeOf('https://a.example/', clock.now());
        await flush();
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBeUndefined();
        const throwing = ipScopes(() => {
            throw new Error('boom');
        });
        throwing.scopes.scopeOf('https://b.example/', clock.now());
        await flush();
        expect(throwing.scopes.scopeOf('https://b.example/', clock.now())).toBeUndefined();
        expect([...warnings, ...throwing.warnings].join('\n')).toMatch(/no usable address[\s\S]*boom/);
    });

    test('a first answer that never comes: after the timeout the host goes by itself; a late answer still counts', async () => {
        const fake = manualResolver();
        const { scopes, clock, warnings } = ipScopes(fake.resolver);
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBe('pending');
        clock.advance(DNS_RESOLVE_TIMEOUT_MS - 1);
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBe('pending');
        clock.advance(1);
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBeUndefined();
        expect(warnings[0]).toMatch(/no answer within 5 s/);
        await flush();
        await fake.answer({ addresses: ['203.0.113.7'], ttlSecs: 60 });
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBe('ip:203.0.113.7');
    });

    test('a resolver that hangs is asked again after the failure retry time, not on every request', async () => {
        const fake = manualResolver();
        const { scopes, clock, warnings } = ipScopes(fake.resolver);
        scopes.scopeOf('https://a.example/', clock.now());
        clock.advance(DNS_RESOLVE_TIMEOUT_MS);
        for (let i = 0; i < 5; i++) {
            expect(scopes.scopeOf('https://a.example/', clock.now())).toBeUndefined();
            clock.advance(DNS_FAILURE_RETRY_MS / 10);
        }
        await flush();
        expect(fake.asked).toHaveLength(1);
        clock.advance(DNS_FAILURE_RETRY_MS / 2);
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBeUndefined();
        await flush();
        expect(fake.asked).toHaveLength(2);
        expect(warnings).toHaveLength(1);
    });

    test('a domain held for the first answer is released when it comes', async () => {
        const fake = manualResolver();
        const { scopes, clock, released } = ipScopes(fake.resolver);
        const entry = { key: 'a.example' } as DomainQueue;
        expect(scopes.scopeOf('https://a.example/', clock.now())).toBe('pending');
        const heldUntil = scopes.hold('https://a.example/', entry, clock.now());
        expect(heldUntil).toBe(clock.now() + DNS_RESOLVE_TIMEOUT_MS);
        await flush();
        expect(released).toEqual([]);
        await fake.answer({ addresses: ['203.0.113.7'], ttlSecs: 60 });
        expect(released).toEqual([[entry, heldUntil]]);
    });
});

describe('the system resolver', () => {
    const record = (address: string, ttl: number) => ({ address, ttl });
    const api = (over: Partial<DnsApi>): DnsApi => ({
        resolve4: async () => Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' })),
        resolve6: async () => Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' })),
        lookup: async () => Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' })),
        ...over,
    });

    test('A and AAAA records, with the least TTL of them', async () => {
        const resolve = createSystemIpResolver(
            api({
                resolve4: async () => [record('203.0.113.8', 300), record('203.0.113.7', 120)],
                resolve6: async () => [record('2001:db8::1', 600)],
            }),
        );
        await expect(resolve('a.example')).resolves.toEqual({
            addresses: ['203.0.113.8', '203.0.113.7', '2001:db8::1'],
            ttlSecs: 120,
        });
    });

    test('a name DNS does not know falls back to the system lookup, kept the documented default', async () => {
        const lookup = jest.fn(async () => [{ address: '127.0.0.1', family: 4 }]);
        const resolve = createSystemIpResolver(api({ lookup }));
        await expect(resolve('intranet')).resolves.toEqual({ addresses: ['127.0.0.1'], ttlSecs: LOOKUP_TTL_SECS });
        expect(LOOKUP_TTL_SECS).toBe(60);
    });

    test('*.localhost goes to the lookup without asking DNS; nothing found at all rejects', async () => {
        const resolve4 = jest.fn(async () => [record('203.0.113.7', 60)]);
        const resolve = createSystemIpResolver(
            api({ resolve4, lookup: async () => [{ address: '127.0.0.1', family: 4 }] }),
        );
        await expect(resolve('a.localhost')).resolves.toMatchObject({ addresses: ['127.0.0.1'] });
        expect(resolve4).not.toHaveBeenCalled();
        await expect(createSystemIpResolver(api({}))('nowhere.example')).rejects.toThrow(/ENOTFOUND/);
    });

    test("on this machine: localhost resolves through Node's own resolver", async () => {
        const answer = await createSystemIpResolver()('localhost');
        expect(pickAddress(answer.addresses)).toMatch(/^(127\.0\.0\.1|::1)$/);
    });
});

describe("the manager with throttleBy: 'ip'", () => {
    const hosts: Record<string, string[]> = {
        'a.example': ['203.0.113.7'],
        'b.example': ['203.0.113.7'],
        'c.example': ['198.51.100.1'],
    };
    const resolver = async (host: string) => {
        if (!hosts[host]) throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        return { addresses: hosts[host], ttlSecs: 300 };
    };

    function setup(options: Partial<ThrottlingRequestManagerOptions> = {}) {
        const clock = new ManualClock(0);
        const manager = new ThrottlingRequestManager(
            {
                domains: 'all',
                queueLayout: 'perDomain',
                clock,
                respectCrawlDelay: false,
                throttleBy: 'ip',
                ipResolver: resolver,
                ...options,
            },
            memoryConfig(),
        );
        return { clock, manager };
    }

    async function drain(manager: ThrottlingRequestManager): Promise<string[]> {
        const out: string[] = [];
        for (let r = await manager.fetchNextRequest(); r; r = await manager.fetchNextRequest()) {
            out.push(new URL(r.url).hostname);
            await manager.markRequestHandled(r as Request);
        }
        return out;
    }

    async function add(manager: ThrottlingRequestManager, urls: string[]) {
        for (const url of urls) await manager.addRequest({ url });
        await flush();
    }

    test('hosts on one address share its pace; a host on another address goes on', async () => {
        const { manager, clock } = setup({ ipScope: { delaySecs: 1 } });
        await add(manager, ['https://a.example/1', 'https://b.example/1', 'https://c.example/1']);
        const first = await drain(manager);
        expect(first.sort()).toEqual(['a.example', 'c.example']);
        clock.advance(999);
        expect(await drain(manager)).toEqual([]);
        clock.advance(1);
        expect(await drain(manager)).toEqual(['b.example']);
        const ipRow = manager.snapshot().find((s) => s.domain === 'ip:203.0.113.7');
        expect(ipRow).toMatchObject({ dispatched: 2, intervalMs: 1000 });
    });

    test('without it each host is paced alone', async () => {
        const { manager } = setup({ throttleBy: 'hostname', ipResolver: undefined, delaySecs: 1 });
        await add(manager, ['https://a.example/1', 'https://b.example/1']);
        expect((await drain(manager)).sort()).toEqual(['a.example', 'b.example']);
    });

    test("both must allow: the address scope does not replace the host's", async () => {
        // Host: 2 s apart; address: 1 s apart.
        const { manager, clock } = setup({ delaySecs: 2, ipScope: { delaySecs: 1 } });
        await add(manager, ['https://a.example/1', 'https://a.example/2', 'https://b.example/1']);
        expect(await drain(manager)).toHaveLength(1);
        clock.advance(1000);
        expect(await drain(manager)).toHaveLength(1);
        clock.advance(1000);
        expect(await drain(manager)).toEqual(['a.example']);
        expect(manager.snapshot().find((s) => s.domain === 'ip:203.0.113.7')).toMatchObject({ dispatched: 3 });
    });

    test("a refusal backs the address off too, holding its other hosts (ipScope's backoffStatusCodes decide)", async () => {
        const { manager, clock } = setup();
        await add(manager, ['https://a.example/1', 'https://b.example/1']);
        const r = (await manager.fetchNextRequest())!;
        await expect(
            manager.handleResponse({ request: r }, { statusCode: 429, headers: { 'retry-after': '5' } }),
        ).rejects.toThrow();
        await manager.reclaimRequest(r);
        expect(await drain(manager)).toEqual([]);
        clock.advance(4999);
        expect(await drain(manager)).toEqual([]); // b.example too: its address is backed off
        clock.advance(1);
        // Adaptive pacing (the default) learned no pace from a refusal with no answer: both go again.
        expect((await drain(manager)).sort()).toEqual(['a.example', 'b.example']);

        const lenient = setup({ ipScope: { backoffStatusCodes: [] } });
        await add(lenient.manager, ['https://a.example/1', 'https://b.example/1']);
        const first = (await lenient.manager.fetchNextRequest())!;
        await expect(
            lenient.manager.handleResponse({ request: first }, { statusCode: 429, headers: { 'retry-after': '5' } }),
        ).rejects.toThrow();
        await lenient.manager.reclaimRequest(first);
        // The address is not backed off: the other host goes.
        expect(await drain(lenient.manager)).toEqual([
            new URL(first.url).hostname === 'a.example' ? 'b.example' : 'a.example',
        ]);
    });

    test('scopes["ip:…"] sets one address apart from ipScope', async () => {
        const { manager, clock } = setup({
            ipScope: { delaySecs: 10 },
            scopes: { 'ip:203.0.113.7': { delaySecs: 1 } },
        });
        expect(manager.policyOf('ip:203.0.113.7')).toMatchObject({ delayMs: 1000 });
        expect(manager.policyOf('ip:198.51.100.1')).toMatchObject({ delayMs: 10_000 });
        expect(manager.policyOf('a.example')).toMatchObject({ delayMs: 0 });
        await add(manager, ['https://a.example/1', 'https://b.example/1']);
        expect(await drain(manager)).toHaveLength(1);
        clock.advance(1000);
        expect(await drain(manager)).toHaveLength(1);
        manager.updateScope('ip:198.51.100.1', { delaySecs: 3 });
        expect(manager.policyOf('ip:198.51.100.1')).toMatchObject({ delayMs: 3000 });
    });

    test('a host that does not resolve is paced by itself, with one warning; nothing is lost', async () => {
        const warn = jest.spyOn(Object.getPrototypeOf(log), 'warning').mockImplementation(() => undefined);
        try {
            const { manager } = setup({ ipScope: { delaySecs: 60 } });
            await add(manager, ['https://gone.example/1', 'https://gone.example/2', 'https://a.example/1']);
            // gone.example/1 and a.example/1 go; gone.example/2 waits for its host (concurrency 1), not for DNS.
            const out = await drain(manager);
            expect(out.sort()).toEqual(['a.example', 'gone.example', 'gone.example']);
            const messages = warn.mock.calls.map((c) => String(c[0])).filter((m) => m.includes('gone.example'));
            expect(messages).toHaveLength(1);
            expect(messages[0]).toMatch(/could not be resolved \(ENOTFOUND\)/);
        } finally {
            warn.mockRestore();
        }
    });

    test('a request whose first answer is still on its way waits; the answer releases it at once', async () => {
        const fake = manualResolver();
        let manager!: ThrottlingRequestManager;
        const { port } = withPort(() => (manager = setup({ ipResolver: fake.resolver }).manager));
        await manager.addRequest({ url: 'https://a.example/1' });
        await flush();
        expect(fake.asked).toEqual(['a.example']);
        expect(await manager.fetchNextRequest()).toBeNull();
        const woken = jest.fn();
        port.onWake(woken);
        await fake.answer({ addresses: ['203.0.113.7'], ttlSecs: 60 });
        expect(woken).toHaveBeenCalled();
        const r = await manager.fetchNextRequest();
        expect(r?.url).toBe('https://a.example/1');
        expect(manager.snapshot().find((s) => s.domain === 'ip:203.0.113.7')).toMatchObject({ dispatched: 1 });
    });

    test('options are validated with messages naming them', () => {
        const make = (o: Partial<ThrottlingRequestManagerOptions>) =>
            new ThrottlingRequestManager({
                domains: 'all',
                queueLayout: 'perDomain',
                ...o,
            } as ThrottlingRequestManagerOptions);
        expect(() => make({ throttleBy: 'address' as never })).toThrow(
            "`throttleBy`: throttleBy must be 'hostname', 'registrableDomain' or 'ip'",
        );
        expect(() => make({ ipScope: { delaySecs: 1 } })).toThrow(ThrottlingOptionsError);
        expect(() => make({ ipScope: { delaySecs: 1 } })).toThrow(
            '`ipScope` applies only with throttleBy: \'ip\' (throttleBy is "hostname")',
        );
        expect(() => make({ ipResolver: resolver, throttleBy: 'registrableDomain' })).toThrow(
            /`ipResolver` applies only/,
        );
        expect(() => make({ throttleBy: 'ip', ipScope: { delaySecs: -1 } })).toThrow(
            '`ipScope.delaySecs`: delaySecs must be >= 0',
        );
        expect(() => make({ throttleBy: 'ip', ipScope: { delay: 1 } as never })).toThrow(
            'unknown option(s) `delay` in `ipScope`',
        );
        expect(() => make({ throttleBy: 'ip', ipScope: 5 as never })).toThrow(/`ipScope`: ipScope must be an object/);
        expect(() => make({ throttleBy: 'ip', ipResolver: 'dns' as never })).toThrow(
            /`ipResolver`: ipResolver must be a function/,
        );
        expect(() => make({ throttleBy: 'ip', scopes: { 'ip:shop.example': { delaySecs: 1 } } })).toThrow(
            /`scopes.ip:shop.example`: scope key "ip:shop.example" names no IP address/,
        );
        expect(() => make({ throttleBy: 'ip', ipScope: { baseDelaySecs: 9, maxDelaySecs: 3 } })).toThrow(
            /in scope `ipScope`, baseDelaySecs \(9\) must not exceed maxDelaySecs \(3\)/,
        );
        // Keys per hostname under 'ip'; the address is a scope beside them.
        const manager = make({ throttleBy: 'ip' });
        expect(manager.options).toMatchObject({ throttleBy: 'hostname', paceByIp: true });
        expect(manager.domainKeyOf('https://www.example.com/')).toBe('www.example.com');
    });
});
