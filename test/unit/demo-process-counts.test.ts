import { processCounts } from '../../packages/demo/src/live';

describe('the demo counts requests per crawler process', () => {
    test('lists processes in numeric order', () => {
        const counts = new Map([
            ['10', 1],
            ['2', 4],
            ['1', 5],
        ]);
        expect(processCounts(counts)).toBe('p1 5 · p2 4 · p10 1');
    });

    test('a process that crawled nothing shows 0 rather than vanishing', () => {
        const counts = new Map([
            ['1', 5],
            ['3', 7],
        ]);
        expect(processCounts(counts, 3)).toBe('p1 5 · p2 0 · p3 7');
        expect(processCounts(undefined, 2)).toBe('p1 0 · p2 0');
    });

    test('prints nothing when no request names its process', () => {
        expect(processCounts(undefined)).toBe('');
        expect(processCounts(new Map())).toBe('');
    });
});
