import { PassThrough } from 'node:stream';
import type { Readable } from 'node:stream';

import type { NavigationContext } from './navigation-context';

/** Bytes of a body `refusalWhen` gets to see: a challenge or "slow down" page says so near its top. */
export const REFUSAL_BODY_MAX_BYTES = 256 * 1024;

/**
 * The response fields a crawler reads after its post-navigation hooks (Crawlee 3.x's HTTP crawlers
 * copy the same list onto their response stream), carried over to the stream that replays the body.
 */
const RESPONSE_FIELDS = [
    'statusCode',
    'statusMessage',
    'headers',
    'complete',
    'httpVersion',
    'rawHeaders',
    'rawTrailers',
    'trailers',
    'url',
    'request',
    'redirectUrls',
    'requestUrl',
    'ip',
    'timings',
    'isFromCache',
    'retryCount',
] as const;

// The streams made to replay a body that was read, so only they are ever discarded in its place.
const replays = new WeakSet<object>();

/** Whether `value` is a stream made by {@link bodyReader} to replay a body it read. */
export function isBodyReplay(value: unknown): boolean {
    return typeof value === 'object' && value !== null && replays.has(value);
}

/**
 * A reader of the first {@link REFUSAL_BODY_MAX_BYTES} of a response body as text, that leaves the
 * whole body to the crawler; read once, on first call. Undefined text when the body cannot be read
 * without taking it from the crawler (a stream that is not the context's response) or fails.
 *
 * - A body already in memory (`sendRequest()`'s response) is read as it is.
 * - Playwright's and Puppeteer's responses read theirs with `text()` as often as asked; a fetch
 *   `Response` can be read once, so a clone is read.
 * - An HTTP crawler's response is a stream its crawler reads after the hooks: the first bytes are
 *   read, and the context's `response` becomes a stream that replays them and then the rest, with the
 *   response's fields (status, headers, URL...), so the crawler parses the body it would have.
 */
export function bodyReader(context: NavigationContext, response: unknown): () => Promise<string | undefined> {
    let read: Promise<string | undefined> | undefined;
    return () => (read ??= readBody(context, response).catch(() => undefined));
}

async function readBody(context: NavigationContext, response: unknown): Promise<string | undefined> {
    if (typeof response !== 'object' || response === null) return undefined;
    const r = response as Record<string, unknown>;
    if (typeof r.body === 'string') return r.body.slice(0, REFUSAL_BODY_MAX_BYTES);
    if (Buffer.isBuffer(r.body)) return r.body.subarray(0, REFUSAL_BODY_MAX_BYTES).toString('utf8');
    if (typeof r.text === 'function') {
        const source = typeof r.clone === 'function' ? (r.clone as () => unknown).call(response) : response;
        const text = await (source as { text(): Promise<string> }).text();
        return text.slice(0, REFUSAL_BODY_MAX_BYTES);
    }
    if (!isReadable(response) || context.response !== response) return undefined;
    const { head, replay } = await peek(response, REFUSAL_BODY_MAX_BYTES);
    context.response = replay;
    return head.toString('utf8');
}

function isReadable(value: object): value is Readable {
    const r = value as Partial<Readable>;
    return typeof r.pipe === 'function' && typeof r.on === 'function' && typeof r.pause === 'function';
}

/**
 * Reads up to `maxBytes` of `stream` (all of it if shorter), then pauses it. `replay` yields those
 * bytes and then whatever `stream` still has, and carries its response fields; an error of `stream`
 * reaches `replay`.
 */
export async function peek(stream: Readable, maxBytes: number): Promise<{ head: Buffer; replay: Readable }> {
    const chunks: Buffer[] = [];
    let size = 0;
    await new Promise<void>((resolve, reject) => {
        if (stream.readableEnded) return resolve();
        if (stream.destroyed) return reject(new Error('The response was destroyed before its body was read'));
        const done = (error?: unknown) => {
            stream.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
            if (error === undefined) resolve();
            else reject(error);
        };
        const onData = (chunk: Buffer | string) => {
            const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
            chunks.push(bytes);
            size += bytes.length;
            if (size >= maxBytes) {
                stream.pause();
                done();
            }
        };
        const onEnd = () => done();
        const onError = (error: unknown) => done(error);
        // Closed before its end: the body is broken, as a reset connection leaves it.
        const onClose = () => (stream.readableEnded ? done() : done(new Error('The response closed before its end')));
        stream.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
    });
    const head = Buffer.concat(chunks);
    return { head: head.subarray(0, maxBytes), replay: replayOf(stream, head) };
}

function replayOf(stream: Readable, head: Buffer): Readable {
    const replay = new PassThrough();
    replays.add(replay);
    const fields = replay as unknown as Record<string, unknown>;
    const source = stream as unknown as Record<string, unknown>;
    for (const field of RESPONSE_FIELDS) if (field in source) fields[field] = source[field];
    if (head.length > 0) replay.write(head);
    if (stream.readableEnded) {
        replay.end();
        return replay;
    }
    stream.once('error', (error) => replay.destroy(error));
    // Crawlee sets these on its stream when the body ends; the replay ends later and must agree.
    stream.once('end', () => {
        for (const field of ['complete', 'trailers', 'rawTrailers'] as const) fields[field] = source[field];
    });
    stream.pipe(replay);
    stream.resume();
    return replay;
}
