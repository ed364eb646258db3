import { domainKeyOfConfigured } from '../../packages/throttling/src/routing/domain-key';
import {
    domainKeyFromQueueName,
    isThrottledQueueName,
    MAX_THROTTLED_QUEUE_NAME_LENGTH,
    THROTTLED_QUEUE_NAME_PREFIX,
    throttledQueueName,
} from '../../packages/throttling/src/queues/queue-name';

// Safe as a directory name everywhere, and no trailing dot (Windows drops it).
const FILESYSTEM_SAFE = /^[a-z0-9._-]+(?<!\.)$/;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

const KEYS = [
    'example.com',
    'www.example.com',
    'xn--bcher-kva.example',
    'a.co.uk',
    '127.0.0.1',
    '::1',
    '2001:db8::8a2e:370:7334',
    'localhost',
    'my_host.example.com',
    '_',
    '_5f',
    'a_3ab',
    'a:b',
    'A',
    'a',
    'a.',
    'bücher.example',
    '😀.example',
    '\ud800',
    '\ufffd',
    'a/b',
    '..',
    '123e4567-e89b-12d3-a456-426614174000.example',
    '123e4567-e89b-12d3-a456-426614174000-e89b-12d3-a456-426614174000',
];

describe('throttledQueueName', () => {
    it.each([
        ['example.com', 'throttled-example.com'],
        ['xn--bcher-kva.example', 'throttled-xn--bcher-kva.example'],
        ['127.0.0.1', 'throttled-127.0.0.1'],
        ['::1', 'throttled-_3a_3a1'],
        ['my_host.example.com', 'throttled-my_5fhost.example.com'],
        ['A', 'throttled-_41'],
        ['a.', 'throttled-a_2e'],
        ['ü', 'throttled-_fc'],
        ['😀', 'throttled-_ud83d_ude00'],
    ])('encodes %j as %j', (key, name) => {
        expect(throttledQueueName(key)).toBe(name);
    });

    it.each(KEYS)('round-trips %j', (key) => {
        const name = throttledQueueName(key);
        expect(name.startsWith(THROTTLED_QUEUE_NAME_PREFIX)).toBe(true);
        expect(domainKeyFromQueueName(name)).toBe(key);
        expect(isThrottledQueueName(name)).toBe(true);
    });

    it('is injective, also under case-insensitive comparison as memory-storage does', () => {
        const names = KEYS.map(throttledQueueName);
        expect(new Set(names).size).toBe(KEYS.length);
        expect(new Set(names.map((name) => name.toLowerCase())).size).toBe(KEYS.length);
    });

    it.each(KEYS)('produces a filesystem-safe name for %j', (key) => {
        const name = throttledQueueName(key);
        expect(name).toMatch(FILESYSTEM_SAFE);
        expect(name.length).toBeLessThanOrEqual(MAX_THROTTLED_QUEUE_NAME_LENGTH);
    });

    it('never contains a UUID, which memory-storage would read back as a queue id', () => {
        for (const key of KEYS.filter((k) => UUID.test(k))) {
            expect(throttledQueueName(key)).not.toMatch(UUID);
        }
        expect(throttledQueueName('123e4567-e89b-12d3-a456-426614174000.example')).toBe(
            'throttled-123e4567_2de89b-12d3-a456-426614174000.example',
        );
    });

    it('produces safe names for keys derived from configuration', () => {
        for (const domain of ['Bücher.example', '[::1]:8080', 'WWW.Example.com.', 'my_host.example.com']) {
            for (const mode of ['hostname', 'registrableDomain'] as const) {
                const key = domainKeyOfConfigured(domain, mode);
                const name = throttledQueueName(key);
                expect(name).toMatch(FILESYSTEM_SAFE);
                expect(domainKeyFromQueueName(name)).toBe(key);
            }
        }
    });

    it('keeps names up to the limit reversible and hashes longer ones', () => {
        const fits = 'a'.repeat(MAX_THROTTLED_QUEUE_NAME_LENGTH - THROTTLED_QUEUE_NAME_PREFIX.length);
        expect(throttledQueueName(fits)).toBe(THROTTLED_QUEUE_NAME_PREFIX + fits);
        expect(domainKeyFromQueueName(throttledQueueName(fits))).toBe(fits);

        const tooLong = `${fits}b`;
        const hashed = throttledQueueName(tooLong);
        expect(hashed).toHaveLength(MAX_THROTTLED_QUEUE_NAME_LENGTH);
        expect(hashed).toMatch(FILESYSTEM_SAFE);
        expect(hashed).toMatch(/^throttled-a+_h[0-9a-f]{32}$/);
        expect(throttledQueueName(tooLong)).toBe(hashed);
        expect(isThrottledQueueName(hashed)).toBe(true);
        expect(domainKeyFromQueueName(hashed)).toBeUndefined();
    });

    it('gives distinct hashed names to long keys that differ only at the end', () => {
        const label = 'x'.repeat(60);
        const base = `${label}.${label}.${label}.${label}`;
        const names = ['a', 'b', '_', ':'].map((suffix) => throttledQueueName(`${base}${suffix}`));
        expect(new Set(names).size).toBe(4);
        for (const name of names) {
            expect(name).toHaveLength(MAX_THROTTLED_QUEUE_NAME_LENGTH);
            expect(name).toMatch(FILESYSTEM_SAFE);
        }
    });

    it('never cuts an escape in half when shortening', () => {
        const key = ':'.repeat(200);
        expect(throttledQueueName(key)).toMatch(/^throttled-(_3a)+_h[0-9a-f]{32}$/);
    });

    it('rejects an empty or non-string key', () => {
        expect(() => throttledQueueName('')).toThrow(TypeError);
        expect(() => throttledQueueName(undefined as unknown as string)).toThrow(TypeError);
    });
});

describe('domainKeyFromQueueName', () => {
    it.each([
        'default',
        'throttled-',
        'Throttled-example.com',
        'other-example.com',
        'throttled-Example.com',
        'throttled-_61',
        'throttled-a_2D',
        'throttled-a_zz',
        'throttled-a_4',
        'throttled-_u12',
        'throttled-a.',
        'throttled-a b',
        'throttled-123e4567-e89b-12d3-a456-426614174000',
    ])('rejects %j, which throttledQueueName never produces', (name) => {
        expect(domainKeyFromQueueName(name)).toBeUndefined();
        expect(isThrottledQueueName(name)).toBe(false);
    });

    it('rejects names that only look hashed', () => {
        const hashedLike = `throttled-abc_h${'0'.repeat(32)}`;
        expect(isThrottledQueueName(hashedLike)).toBe(false);
        expect(isThrottledQueueName(`${throttledQueueName('x'.repeat(300))}0`)).toBe(false);
    });

    it('returns undefined for non-strings', () => {
        expect(domainKeyFromQueueName(42 as unknown as string)).toBeUndefined();
        expect(isThrottledQueueName(null as unknown as string)).toBe(false);
    });
});
