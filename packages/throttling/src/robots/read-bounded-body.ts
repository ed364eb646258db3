import type { Readable } from 'node:stream';

/** What {@link readBoundedBody} read, and why it stopped early (if it did). */
export interface BoundedBody {
    /** At most `maxBytes` bytes, in arrival order. */
    bytes: Buffer;
    /** `'size'`: `maxBytes` reached; `'time'`: the signal aborted first; undefined: the stream ended. */
    cut?: 'size' | 'time';
}

/** Options of {@link readBoundedBody}. */
export interface ReadBoundedBodyOptions {
    /** Bytes to keep; reading stops as soon as this many have arrived. A positive integer. */
    maxBytes: number;
    /** When it aborts, reading stops and what arrived so far is kept. */
    signal?: AbortSignal;
}

/**
 * Reads a (decompressed) body stream until it ends, `maxBytes` have arrived, or `signal` aborts,
 * then destroys the stream so nothing more is downloaded or inflated. Reading the whole body first
 * and cutting it afterwards let a 200 KB gzip bomb inflate to hundreds of MB in memory.
 *
 * Rejects when the stream fails (or closes without ending) before either limit: a body broken by
 * the transport is not a file to parse. A limit reached first always wins over a later error.
 */
export function readBoundedBody(stream: Readable, options: ReadBoundedBodyOptions): Promise<BoundedBody> {
    const { maxBytes, signal } = options;
    if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
        throw new RangeError(`readBoundedBody: maxBytes must be a positive integer, got ${String(maxBytes)}`);
    }
    return new Promise<BoundedBody>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let length = 0;

        const settle = (outcome: { cut?: BoundedBody['cut']; error?: unknown }) => {
            stream.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
            signal?.removeEventListener('abort', onAbort);
            // Errors raised while tearing the stream down have no one left to hear them.
            stream.on('error', () => undefined);
            if (!stream.destroyed) stream.destroy();
            if (outcome.error !== undefined) reject(outcome.error);
            else resolve({ bytes: Buffer.concat(chunks, length), cut: outcome.cut });
        };
        const onData = (chunk: Buffer | string) => {
            const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
            const kept = buffer.subarray(0, maxBytes - length);
            chunks.push(kept);
            length += kept.length;
            if (length >= maxBytes) settle({ cut: 'size' });
        };
        const onEnd = () => settle({});
        const onError = (error: unknown) => settle({ error });
        const onClose = () => settle({ error: new Error('body stream closed before it ended') });
        const onAbort = () => settle({ cut: 'time' });

        if (stream.readableEnded) return settle({});
        if (stream.destroyed) return settle({ error: new Error('body stream was destroyed before it was read') });
        if (signal?.aborted) return settle({ cut: 'time' });
        signal?.addEventListener('abort', onAbort, { once: true });
        stream.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
    });
}
