import type { Readable } from 'node:stream';

import { readBoundedBody } from './read-bounded-body';

/** A response whose headers have arrived and whose (decompressed) body is still to be read. */
export interface OpenedResponse {
    statusCode: number;
    headers: Record<string, string | string[] | undefined>;
    stream: Readable;
}

/**
 * Starts a request and resolves once its response headers arrive. It should stop the request when
 * `signal` aborts; if it does not, a response arriving after the deadline is destroyed on arrival.
 */
export type OpenResponse = (signal: AbortSignal) => Promise<OpenedResponse>;

/** Limits of {@link fetchWithBoundedBody}. */
export interface BodyLimits {
    /** Bytes of body kept; the download stops there. */
    maxBytes: number;
    /** Budget for the whole exchange, headers and body together. */
    timeoutMs: number;
}

/**
 * Runs `open` and reads the body under one deadline and one size cap. A deadline passed before the
 * headers rejects (no response); passed during the body, it keeps what arrived, as the size cap does,
 * so a server that trickles its file forever still gets the lines it sent.
 */
export async function fetchWithBoundedBody(
    open: OpenResponse,
    { maxBytes, timeoutMs }: BodyLimits,
): Promise<{ status: number; headers: OpenedResponse['headers']; body: string }> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(timeoutError(timeoutMs)), timeoutMs);
    try {
        const response = await beforeAbort(open(controller.signal), controller.signal);
        const { bytes } = await readBoundedBody(response.stream, { maxBytes, signal: controller.signal });
        // The cut is in bytes, not UTF-16 units, matching RFC 9309's byte-based 500 KiB.
        return { status: response.statusCode, headers: response.headers, body: bytes.toString('utf8') };
    } finally {
        clearTimeout(timer);
    }
}

function timeoutError(timeoutMs: number): Error {
    const error = new Error(`No response within the ${timeoutMs} ms time limit`);
    // got maps an abort whose reason is named TimeoutError to its own TimeoutError.
    error.name = 'TimeoutError';
    return error;
}

/** `pending`, unless `signal` aborts first; then rejects with its reason and drops the late response. */
function beforeAbort(pending: Promise<OpenedResponse>, signal: AbortSignal): Promise<OpenedResponse> {
    return new Promise((resolve, reject) => {
        const onAbort = () => {
            reject(signal.reason);
            pending.then(
                (late) => late.stream.on('error', () => undefined).destroy(),
                () => undefined,
            );
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        pending.then(
            (response) => {
                signal.removeEventListener('abort', onAbort);
                resolve(response);
            },
            (error: unknown) => {
                signal.removeEventListener('abort', onAbort);
                reject(error);
            },
        );
    });
}
