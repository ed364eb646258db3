import { clusterHashTag, encodeKeyPart, redisClockKeys } from '../../packages/throttling/src/shared-clock/redis-keys';

const ODD_KEYS = [
    'example.com',
    '[2001:db8::1]:8080',
    'bücher.de',
    '例え.jp',
    'a}b{c',
    '{x}',
    '%7D',
    'a.com/api/v1',
    '@budget',
];

describe('Redis clock keys', () => {
    it('puts every key of one domain key behind the same hash tag (one Cluster slot)', () => {
        for (const key of ODD_KEYS) {
            const keys = Object.values(redisClockKeys('crawl:', key));
            const tags = new Set(keys.map(clusterHashTag));
            expect(tags.size).toBe(1);
            // The tag is the whole prefixed key, not a fragment cut short by a brace in the key.
            expect([...tags][0]).toBe(`crawl:${encodeKeyPart(key)}`);
        }
    });

    it('gives distinct domain keys distinct tags, braces and percent signs included', () => {
        const tags = ODD_KEYS.map((k) => clusterHashTag(redisClockKeys('p:', k).clock));
        expect(new Set(tags).size).toBe(ODD_KEYS.length);
        expect(encodeKeyPart('a}b{c')).toBe('a%7Db%7Bc');
        expect(encodeKeyPart('%7D')).toBe('%257D');
    });

    it('reads hash tags as Redis Cluster does', () => {
        expect(clusterHashTag('{user1000}.following')).toBe('user1000');
        expect(clusterHashTag('foo{}{bar}')).toBe('foo{}{bar}');
        expect(clusterHashTag('foo{{bar}}zap')).toBe('{bar');
        expect(clusterHashTag('foo{bar}{zap}')).toBe('bar');
        expect(clusterHashTag('plain')).toBe('plain');
    });
});
