import { createHash } from 'node:crypto';

import { DEFAULTS } from '../../packages/throttling/src/options/defaults';
import { QueueNamespace } from '../../packages/throttling/src/queues/queue-namespace';
import {
    domainKeyFromQueueName,
    MAX_THROTTLED_QUEUE_NAME_LENGTH,
    throttledQueueName,
} from '../../packages/throttling/src/queues/queue-name';

// memory-storage reads a queue folder whose name contains a UUID as a queue *id* (losing its name).
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const FILESYSTEM_SAFE = /^[a-z0-9._-]+(?<!\.)$/;

const KEYS = [
    'example.com',
    'www.example.com',
    'xn--bcher-kva.example',
    '127.0.0.2',
    '::1',
    '2001:db8::8a2e:370:7334',
    'localhost',
    'my_host.example.com',
    'k12345678-x.example', // looks like the namespace marker without its underscore
    '_k12345678-x.example', // starts with the marker characters themselves (encoded as _5fk...)
    'a:b',
];

const hash8 = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 8);

describe('QueueNamespace: the default key keeps plain names', () => {
    const ns = new QueueNamespace(DEFAULTS.persistStateKey);

    test('the default key is the one Crawlee v4 uses', () => {
        expect(DEFAULTS.persistStateKey).toBe('CRAWLEE_THROTTLED_DOMAINS');
    });

    test.each(KEYS)('%s: nameOf is throttledQueueName, domainOf reverses it', (key) => {
        const name = ns.nameOf(key);
        expect(name).toBe(throttledQueueName(key));
        expect(ns.domainOf(name)).toBe(key);
    });

    test('examples, IPv6 included', () => {
        expect(ns.nameOf('example.com')).toBe('throttled-example.com');
        expect(ns.nameOf('::1')).toBe('throttled-_3a_3a1');
        expect(ns.domainOf('throttled-_3a_3a1')).toBe('::1');
        expect(ns.domainOf('throttled-2001_3adb8_3a_3a8a2e_3a370_3a7334')).toBe('2001:db8::8a2e:370:7334');
    });

    test('rejects names of a custom namespace', () => {
        const other = new QueueNamespace('crawler-b');
        expect(ns.domainOf(other.nameOf('example.com'))).toBeUndefined();
        expect(ns.domainOf(`throttled-_k${hash8('crawler-b')}-example.com`)).toBeUndefined();
        // Even a marker with a hash no manager uses.
        expect(ns.domainOf('throttled-_k00000000-example.com')).toBeUndefined();
    });

    test('rejects names that are not throttled queues, or not canonical', () => {
        // "_61" is an escaped "a": a second spelling of "throttled-a", so not one of ours.
        for (const name of [
            'default',
            'example.com',
            'throttled-',
            'throttled-Example.com',
            'throttled-_61',
            'throttled-a_zz',
            'my-throttled-example.com',
            '',
        ]) {
            expect(ns.domainOf(name)).toBeUndefined();
        }
    });
});

describe('QueueNamespace: a custom key puts a hash of itself into every name', () => {
    const key = 'crawler-b';
    const ns = new QueueNamespace(key);

    test('names are throttled-<…hash of the key…><encoded domain>, apart from the plain name', () => {
        for (const domain of ['example.com', '::1', 'my_host.example.com']) {
            const name = ns.nameOf(domain);
            const plain = throttledQueueName(domain);
            expect(name).not.toBe(plain);
            expect(name.startsWith('throttled-')).toBe(true);
            expect(name).toContain(hash8(key));
            // The readable domain part stays at the end, encoded as in a plain name.
            expect(name.endsWith(plain.slice('throttled-'.length))).toBe(true);
        }
        // A name belongs to one key; the same key always yields the same name.
        expect(new QueueNamespace(key).nameOf('example.com')).toBe(ns.nameOf('example.com'));
    });

    test.each(KEYS)('%s: round trip', (domain) => {
        expect(ns.domainOf(ns.nameOf(domain))).toBe(domain);
    });

    test('IPv6 round trip', () => {
        for (const ip of ['::1', '2001:db8::8a2e:370:7334', 'fe80::1']) expect(ns.domainOf(ns.nameOf(ip))).toBe(ip);
    });

    test('rejects plain names (the default namespace) and other custom namespaces', () => {
        expect(ns.domainOf('throttled-example.com')).toBeUndefined();
        expect(ns.domainOf(new QueueNamespace(DEFAULTS.persistStateKey).nameOf('example.com'))).toBeUndefined();
        expect(ns.domainOf(new QueueNamespace('crawler-c').nameOf('example.com'))).toBeUndefined();
        expect(ns.domainOf('default')).toBeUndefined();
        const prefix = ns.nameOf('x').slice(0, -1);
        expect(ns.domainOf(prefix)).toBeUndefined();
        expect(ns.domainOf(`${prefix}Example.com`)).toBeUndefined();
        expect(ns.domainOf(`${prefix}_61`)).toBeUndefined(); // an escaped "a": not canonical
    });

    test('two keys get different names for one domain; one key always the same name', () => {
        const a = new QueueNamespace('crawler-a');
        expect(a.nameOf('example.com')).not.toBe(ns.nameOf('example.com'));
        expect(new QueueNamespace(key).nameOf('example.com')).toBe(ns.nameOf('example.com'));
    });

    test('no plain name is a name of a custom namespace, and no custom name a plain one', () => {
        const plain = new QueueNamespace(DEFAULTS.persistStateKey);
        for (const domain of KEYS) {
            expect(ns.domainOf(plain.nameOf(domain))).toBeUndefined();
            expect(plain.domainOf(ns.nameOf(domain))).toBeUndefined();
            expect(plain.nameOf(domain)).not.toBe(ns.nameOf(domain));
        }
    });
});

describe('QueueNamespace: names stay storage-safe in every namespace', () => {
    const namespaces = [
        new QueueNamespace(DEFAULTS.persistStateKey),
        new QueueNamespace('crawler-b'),
        new QueueNamespace('ÜBER key / with spaces'),
    ];

    test.each(KEYS)('%s: filesystem-safe and UUID-free', (domain) => {
        for (const ns of namespaces) {
            const name = ns.nameOf(domain);
            expect(name).toMatch(FILESYSTEM_SAFE);
            expect(name).not.toMatch(UUID);
        }
    });

    // memory-storage would reopen such a folder as an unnamed queue (see queue-name.ts). The hash
    // and the domain may each be UUID-free while the hash's 8 hex digits, a "-" after them and a
    // domain starting with "4hex-4hex-4hex-12hex" together form one.
    test('a domain continuing the hash into a UUID does not produce a UUID-like name', () => {
        const domain = 'abcd-abcd-abcd-abcdefabcdef.example';
        expect(throttledQueueName(domain)).not.toMatch(UUID);
        for (const ns of namespaces) {
            const name = ns.nameOf(domain);
            expect(name).not.toMatch(UUID);
            expect(ns.domainOf(name)).toBe(domain);
        }
    });

    test('a custom namespace keeps names within MAX_THROTTLED_QUEUE_NAME_LENGTH', () => {
        const long = `${'a'.repeat(60)}.${'b'.repeat(60)}.example`;
        for (const ns of namespaces)
            expect(ns.nameOf(long).length).toBeLessThanOrEqual(MAX_THROTTLED_QUEUE_NAME_LENGTH);
        // The plain hashed name is not reversible; it is still a throttled name of ours.
        expect(domainKeyFromQueueName(throttledQueueName(long))).toBeUndefined();
    });
});
