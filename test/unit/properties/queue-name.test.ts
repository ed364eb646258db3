import { createHash } from 'node:crypto';

import fc from 'fast-check';

import {
    domainKeyFromQueueName,
    isThrottledQueueName,
    MAX_THROTTLED_QUEUE_NAME_LENGTH,
    throttledQueueName,
} from '../../../packages/throttling/src/queues/queue-name';
import { DEFAULTS } from '../../../packages/throttling/src/options/defaults';
import { QueueNamespace } from '../../../packages/throttling/src/queues/queue-namespace';
import { domainKeyOfUrl } from '../../../packages/throttling/src/routing/domain-key';
import { fcParams } from './fc-params';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const STORAGE_SAFE = /^[a-z0-9._-]+(?<!\.)$/;

const PERSIST_KEYS = [DEFAULTS.persistStateKey, 'crawler-a', 'crawler-b', 'ÜBER key / with spaces'];
const hash8 = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 8);

/**
 * Domain keys, weighted towards the awkward ones: WHATWG accepts `~` and `_` in hostnames, so a key
 * may look like a namespace tag (`~<hash>~…`) or an escape (`_5f`); long keys get hashed names.
 */
// A small pool, so that a key and a tagged spelling of the same key meet within one run.
const pooledDomain = fc.constantFrom('example.com', 'a.example', 'x', '::1');

const domainKey = fc.oneof(
    fc.domain(),
    pooledDomain,
    fc.ipV6(),
    fc.string({ minLength: 1, maxLength: 20 }),
    fc.string({ unit: fc.constantFrom(...'~_-.a0f:x'), minLength: 1, maxLength: 16 }),
    fc
        .tuple(fc.constantFrom(...PERSIST_KEYS), fc.constantFrom('~', '~~', '_7e'), fc.oneof(pooledDomain, fc.domain()))
        .map(([persistKey, mark, d]) => `${mark}${hash8(persistKey)}~${d}`),
    fc.tuple(fc.stringMatching(/^~[0-9a-f]{8}~$/), fc.domain()).map(([tag, d]) => tag + d),
    fc.domain().map((d) => `${'a'.repeat(100)}.${d}`),
    fc.uuid().map((u) => `${u}.example`),
);

describe('queue names: properties', () => {
    test('every name is storage-safe, UUID-free, bounded, and recognised as ours', () => {
        fc.assert(
            fc.property(domainKey, (key) => {
                const name = throttledQueueName(key);
                expect(name).toMatch(STORAGE_SAFE);
                expect(name).not.toMatch(UUID);
                expect(name.length).toBeLessThanOrEqual(MAX_THROTTLED_QUEUE_NAME_LENGTH);
                expect(isThrottledQueueName(name)).toBe(true);
            }),
            fcParams(500),
        );
    });

    test('domainKeyFromQueueName reverses every name that is not hashed', () => {
        fc.assert(
            fc.property(domainKey, (key) => {
                const name = throttledQueueName(key);
                const hashed = name.length === MAX_THROTTLED_QUEUE_NAME_LENGTH && /_h[0-9a-f]{32}$/.test(name);
                expect(domainKeyFromQueueName(name)).toBe(hashed ? undefined : key);
            }),
            fcParams(500),
        );
    });

    test('no two keys share a name, and no junk name decodes to a key with another name', () => {
        fc.assert(
            fc.property(fc.uniqueArray(domainKey, { minLength: 2, maxLength: 20 }), (keys) => {
                expect(new Set(keys.map(throttledQueueName)).size).toBe(keys.length);
            }),
            fcParams(300),
        );
        fc.assert(
            fc.property(fc.string({ unit: fc.constantFrom(...'throttled-_7eu0a.'), maxLength: 30 }), (name) => {
                const key = domainKeyFromQueueName(name);
                if (key !== undefined) expect(throttledQueueName(key)).toBe(name);
            }),
            fcParams(300),
        );
    });
});

describe('queue namespaces: properties', () => {
    const namespaces = PERSIST_KEYS.map((key) => [key, new QueueNamespace(key)] as const);
    const namespaced = fc.tuple(fc.constantFrom(...namespaces), domainKey);

    test('never two (namespace, key) pairs on one name, across namespaces too', () => {
        fc.assert(
            fc.property(
                fc.uniqueArray(namespaced, { minLength: 2, maxLength: 12, selector: ([[p], k]) => `${p}\n${k}` }),
                (pairs) => {
                    const names = pairs.map(([[, ns], key]) => ns.nameOf(key));
                    expect(new Set(names).size).toBe(pairs.length);
                },
            ),
            fcParams(500),
        );
    });

    test('a key spelled like another namespace’s tag plus a key still gets a name of its own', () => {
        const spelledAsTagged = namespaced.chain(([[persistKey, ns], key]) =>
            fc.tuple(
                fc.constant([ns, key] as const),
                fc.constantFrom(...namespaces).map(([, other]) => [other, `~${hash8(persistKey)}~${key}`] as const),
            ),
        );
        fc.assert(
            fc.property(spelledAsTagged, ([[ns, key], [other, spelled]]) => {
                expect(other.nameOf(spelled)).not.toBe(ns.nameOf(key));
            }),
            fcParams(300),
        );
    });

    test('a namespace owns and decodes exactly its own names', () => {
        fc.assert(
            fc.property(namespaced, fc.constantFrom(...namespaces), ([[ownerKey, owner], key], [otherKey, other]) => {
                const name = owner.nameOf(key);
                expect(owner.owns(name)).toBe(true);
                const hashed = name.length === MAX_THROTTLED_QUEUE_NAME_LENGTH && /_h[0-9a-f]{32}$/.test(name);
                expect(owner.domainOf(name)).toBe(hashed ? undefined : key);
                if (otherKey !== ownerKey) {
                    expect(other.owns(name)).toBe(false);
                    expect(other.domainOf(name)).toBeUndefined();
                }
            }),
            fcParams(500),
        );
    });

    test('no name is owned by two namespaces', () => {
        const anyName = fc.oneof(
            namespaced.map(([[, ns], key]) => ns.nameOf(key)),
            fc.string({ unit: fc.constantFrom(...'throttled-_7e5eu0a.h'), maxLength: 40 }),
        );
        fc.assert(
            fc.property(anyName, (name) => {
                expect(namespaces.filter(([, ns]) => ns.owns(name)).length).toBeLessThanOrEqual(1);
            }),
            fcParams(300),
        );
    });
});

describe('queue namespaces: hostnames starting with `~`', () => {
    const plain = new QueueNamespace(DEFAULTS.persistStateKey);
    const custom = new QueueNamespace('crawler-b');
    const lookalike = `~${hash8('crawler-b')}~example.com`;

    test('such hostnames are real domain keys', () => {
        expect(domainKeyOfUrl(`http://${lookalike}/`, 'hostname')).toBe(lookalike);
        expect(domainKeyOfUrl('http://~abc.example/', 'hostname')).toBe('~abc.example');
    });

    test('a default-namespace host that reads like a tag does not take another namespace’s queue', () => {
        expect(plain.nameOf(lookalike)).not.toBe(custom.nameOf('example.com'));
        expect(custom.owns(plain.nameOf(lookalike))).toBe(false);
        expect(plain.owns(custom.nameOf('example.com'))).toBe(false);
    });

    test('the default namespace owns (so purges) and decodes (so reopens) its `~` queues', () => {
        for (const key of ['~abc.example', lookalike, `^${lookalike}`, `~${'a'.repeat(130)}.example`]) {
            const name = plain.nameOf(key);
            expect(plain.owns(name)).toBe(true);
            if (name.length < MAX_THROTTLED_QUEUE_NAME_LENGTH) expect(plain.domainOf(name)).toBe(key);
        }
    });

    test('names of earlier runs still open: ordinary and other `~` hosts keep their names', () => {
        expect(plain.nameOf('example.com')).toBe('throttled-example.com');
        expect(plain.nameOf('::1')).toBe('throttled-_3a_3a1');
        expect(plain.nameOf('~abc.example')).toBe('throttled-_7eabc.example');
        expect(custom.nameOf('example.com')).toBe(`throttled-_7e${hash8('crawler-b')}_7eexample.com`);
        // Only a host reading `~<8 hex>~…` moves, behind a `^` (which no hostname contains).
        expect(plain.nameOf(lookalike)).toBe(`throttled-_5e_7e${hash8('crawler-b')}_7eexample.com`);
    });
});
