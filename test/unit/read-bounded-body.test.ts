import { PassThrough } from 'node:stream';

import { readBoundedBody } from '../../packages/throttling/src/robots/read-bounded-body';

describe('readBoundedBody', () => {
    test('stops at maxBytes across chunks, keeps exactly what fits and destroys the stream', async () => {
        const stream = new PassThrough();
        const reading = readBoundedBody(stream, { maxBytes: 10 });

        stream.write('abcd');
        stream.write('efgh');
        stream.write('ijkl');

        await expect(reading).resolves.toEqual({ bytes: Buffer.from('abcdefghij'), cut: 'size' });
        expect(stream.destroyed).toBe(true);
        // Nothing written after the cut is read or buffered for anyone.
        expect(stream.write('more')).toBe(false);
    });

    test('a body that ends within the limit is returned whole, without a cut', async () => {
        const stream = new PassThrough();
        const reading = readBoundedBody(stream, { maxBytes: 10 });

        stream.write('Delay: ');
        stream.end('1\n');

        await expect(reading).resolves.toEqual({ bytes: Buffer.from('Delay: 1\n'), cut: undefined });
    });

    test('an abort keeps what arrived before it and destroys the stream', async () => {
        const stream = new PassThrough();
        const controller = new AbortController();
        const reading = readBoundedBody(stream, { maxBytes: 1000, signal: controller.signal });
        stream.write('User-agent: *\nCrawl-delay: 2\n');
        await new Promise((resolve) => setImmediate(resolve));

        controller.abort();

        await expect(reading).resolves.toEqual({ bytes: Buffer.from('User-agent: *\nCrawl-delay: 2\n'), cut: 'time' });
        expect(stream.destroyed).toBe(true);
    });

    test('an already aborted signal reads nothing', async () => {
        const stream = new PassThrough();
        stream.write('late');
        const controller = new AbortController();
        controller.abort();

        await expect(readBoundedBody(stream, { maxBytes: 10, signal: controller.signal })).resolves.toEqual({
            bytes: Buffer.alloc(0),
            cut: 'time',
        });
        expect(stream.destroyed).toBe(true);
    });

    test('a stream error before either limit rejects with that error', async () => {
        const stream = new PassThrough();
        const reading = readBoundedBody(stream, { maxBytes: 10 });
        stream.write('abc');

        stream.destroy(new Error('connection reset'));

        await expect(reading).rejects.toThrow('connection reset');
    });

    test('a stream closed without ending rejects (a broken body is not a file)', async () => {
        const stream = new PassThrough();
        const reading = readBoundedBody(stream, { maxBytes: 10 });
        stream.write('abc');

        stream.destroy();

        await expect(reading).rejects.toThrow('body stream closed before it ended');
    });

    test.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('maxBytes %p is refused, naming it', (maxBytes) => {
        expect(() => readBoundedBody(new PassThrough(), { maxBytes })).toThrow(
            `readBoundedBody: maxBytes must be a positive integer, got ${String(maxBytes)}`,
        );
    });
});
