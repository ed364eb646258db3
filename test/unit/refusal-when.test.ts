/**
 * `refusalWhen` says what a response is before the built-in rules do: a refusal
 * they would miss (Shopify's 430, a "slow down" page), or a block for Crawlee's session handling.
 */
import { Readable } from 'node:stream';

import type { Request } from '@crawlee/core';
import { Session, SessionError, SessionPool } from '@crawlee/core';

import type { RefusalWhen, ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import {
    ManualClock,
    RequestBlockedError,
    RequestThrottledError,
    ThrottledRetriesExhaustedError,
    ThrottlingOptionsError,
    ThrottlingRequestManager,
} from 'crawlee-throttling';
import type { NavigationContext } from 'crawlee-throttling/types';
import { memoryConfig } from '../helpers/storage';

const T0 = 1_700_000_000_000;

function setup(refusalWhen?: RefusalWhen, options: Partial<ThrottlingRequestManagerOptions> = {}) {
    const clock = new ManualClock(T0);
    const manager = new ThrottlingRequestManager(
        { domains: ['shop.example'], clock, ...(refusalWhen ? { refusalWhen } : {}), ...options },
        memoryConfig(),
    );
    /** Hands out the next request of shop.example. */
    const next = async (): Promise<Request> => {
        await manager.addRequest({ url: `https://shop.example/p/${Math.random()}` });
        const request = await manager.fetchNextRequest();
        if (!request) throw new Error('nothing to hand out');
        return request;
    };
    const state = () => manager.snapshot().find((s) => s.domain === 'shop.example')!;
    return { clock, manager, next, state };
}

/** A response as an HTTP crawler has it in its post-navigation hooks: a stream with status and headers. */
function streamed(statusCode: number, body: string, headers: Record<string, string> = {}) {
    const stream = Readable.from([Buffer.from(body)]) as Readable & Record<string, unknown>;
    Object.assign(stream, {
        statusCode,
        statusMessage: 'whatever',
        headers: { 'content-type': 'text/html', ...headers },
        url: 'https://shop.example/p',
    });
    return stream;
}

const readAll = async (stream: unknown): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream as Readable) chunks.push(Buffer.from(chunk as Buffer));
    return Buffer.concat(chunks).toString('utf8');
};

describe('refusalWhen: the shorthand', () => {
    test("{ statusCodes: [430] }: Shopify's 430 backs the domain off and is retried for free, as a 429", async () => {
        const { manager, next, state } = setup({ statusCodes: [430] });
        const request = await next();
        const error = await manager.handleResponse({ request }, { statusCode: 430, headers: {} }).catch((e) => e);
        expect(error).toBeInstanceOf(RequestThrottledError);
        expect(error).toMatchObject({ statusCode: 430 });
        // Exactly the backoff a 429 gets.
        const plain = setup();
        await plain.manager
            .handleResponse({ request: await plain.next() }, { statusCode: 429, headers: {} })
            .catch(() => {});
        expect(plain.state().backoffUntil).toBeGreaterThan(T0);
        expect(state()).toMatchObject({ backingOff: true, backoffUntil: plain.state().backoffUntil, refusals: 1 });
        // Crawlee counts the retry, the manager gives it back on reclaim.
        request.retryCount += 1;
        await manager.reclaimRequest(request);
        expect(request.retryCount).toBe(0);
        expect(manager.stats()[0]).toMatchObject({ refused: 1, freeRetries: 1 });
    });

    test('without it a 430 is an ordinary answer: no backoff, no free retry', async () => {
        const { manager, next, state } = setup();
        const request = await next();
        await expect(manager.handleResponse({ request }, { statusCode: 430, headers: {} })).resolves.toBeUndefined();
        expect(state()).toMatchObject({ backingOff: false, refusals: 0 });
    });

    test('bodyPattern: a 200 "slow down" page is refused; a page that does not match reaches the crawler whole', async () => {
        const { manager, next, state } = setup({ bodyPattern: /rate limit exceeded/i });
        const refusedRequest = await next();
        const slowDown = streamed(200, '<html><body>Rate Limit Exceeded. Try later.</body></html>');
        const refusedContext: NavigationContext = { request: refusedRequest, response: slowDown };
        await expect(manager.handleResponse(refusedContext, slowDown)).rejects.toBeInstanceOf(RequestThrottledError);
        expect(state()).toMatchObject({ backingOff: true });
        // The refused body is discarded: nothing is left holding the connection.
        expect(slowDown.destroyed).toBe(true);
        await manager.reclaimRequest(refusedRequest);

        // A page longer than what is read for matching: the crawler gets every byte, and the fields.
        const { manager: other, next: nextOther } = setup({ bodyPattern: 'rate limit exceeded' });
        const request = await nextOther();
        const page = `<html><body>${'x'.repeat(300 * 1024)}<p>the end</p></body></html>`;
        const response = streamed(200, page, { 'set-cookie': 'a=1' });
        const context: NavigationContext = { request, response };
        await expect(other.handleResponse(context, response)).resolves.toBeUndefined();
        expect(context.response).not.toBe(response);
        expect(context.response).toMatchObject({
            statusCode: 200,
            statusMessage: 'whatever',
            url: 'https://shop.example/p',
            headers: { 'content-type': 'text/html', 'set-cookie': 'a=1' },
        });
        await expect(readAll(context.response)).resolves.toBe(page);
    });

    test('statusCodes and bodyPattern together: both must match; the body is read only when the status does', async () => {
        const { manager, next } = setup({ statusCodes: [503], bodyPattern: 'Retry later' });
        const request = await next();
        const other = streamed(200, 'Retry later');
        const context: NavigationContext = { request, response: other };
        await expect(manager.handleResponse(context, other)).resolves.toBeUndefined();
        // Not read: the crawler keeps its own stream.
        expect(context.response).toBe(other);
        const unavailable = streamed(503, 'Service unavailable. Retry later.');
        await expect(manager.handleResponse({ request, response: unavailable }, unavailable)).rejects.toBeInstanceOf(
            RequestThrottledError,
        );
    });

    test('a global RegExp matches every response, not every other one', async () => {
        const bodyPattern = /slow down/g;
        for (let i = 0; i < 3; i++) {
            const { manager, next } = setup({ bodyPattern });
            const request = await next();
            const response = { statusCode: 200, headers: {}, body: 'please slow down' };
            await expect(manager.handleResponse({ request }, response)).rejects.toBeInstanceOf(RequestThrottledError);
        }
    });

    test('headerPattern: the named header (any case) must match', async () => {
        const { manager, next } = setup({ headerPattern: { name: 'X-Throttled', pattern: 'yes' } });
        const request = await next();
        const plain = { statusCode: 200, headers: { 'x-throttled': 'no' } };
        await expect(manager.handleResponse({ request }, plain)).resolves.toBeUndefined();
        const throttled = { statusCode: 200, headers: { 'X-Throttled': 'yes' } };
        await expect(manager.handleResponse({ request }, throttled)).rejects.toBeInstanceOf(RequestThrottledError);
    });

    test('maxFreeRetries still bounds the free retries', async () => {
        const { manager, next } = setup({ statusCodes: [430] }, { maxFreeRetries: 1 });
        const request = await next();
        await expect(manager.handleResponse({ request }, { statusCode: 430, headers: {} })).rejects.toBeInstanceOf(
            RequestThrottledError,
        );
        await expect(manager.handleResponse({ request }, { statusCode: 430, headers: {} })).rejects.toBeInstanceOf(
            ThrottledRetriesExhaustedError,
        );
    });
});

describe('refusalWhen: a function', () => {
    test("'blocked' goes to Crawlee's session handling: a SessionError, the session not spared, no backoff, no free retry", async () => {
        const challenge = 'Checking your browser before accessing';
        const { manager, next, state } = setup(async (_context, response) =>
            response.statusCode === 503 && (await response.body())?.includes(challenge) ? 'blocked' : undefined,
        );
        const request = await next();
        const session = new Session({ sessionPool: new SessionPool() });
        const page = streamed(503, `<html>${challenge}</html>`);
        const error = await manager.handleResponse({ request, session, response: page }, page).catch((e) => e);
        expect(error).toBeInstanceOf(RequestBlockedError);
        expect(error).toBeInstanceOf(SessionError);
        expect(error).toMatchObject({ code: 'ERR_THROTTLING_REQUEST_BLOCKED', statusCode: 503 });
        // A 503 alone would be a refusal: the verdict wins over the built-in rules.
        expect(state()).toMatchObject({ backingOff: false, refusals: 0 });
        // Crawlee's markBad() after the error counts against the session.
        expect(Object.prototype.hasOwnProperty.call(session, 'markBad')).toBe(false);
        request.retryCount += 1;
        await manager.reclaimRequest(request);
        expect(request.retryCount).toBe(1);

        // The same 503 without the challenge is still a refusal (undefined falls back).
        const again = await next();
        const busy = streamed(503, 'busy');
        await expect(manager.handleResponse({ request: again, response: busy }, busy)).rejects.toBeInstanceOf(
            RequestThrottledError,
        );
    });

    test('gets the context and what the response says; body() reads once; undefined keeps the built-in rules', async () => {
        const seen: unknown[] = [];
        const { manager, next } = setup(async (context, response) => {
            const first = await response.body();
            seen.push({
                context,
                raw: response.raw,
                status: response.statusCode,
                header: response.headers['retry-after'],
                body: first,
                again: (await response.body()) === first,
            });
            return undefined;
        });
        const request = await next();
        const context = { request };
        const response = { statusCode: 429, headers: { 'Retry-After': '3' }, body: 'too many' };
        await expect(manager.handleResponse(context, response)).rejects.toMatchObject({ waitMs: 3_000 });
        expect(seen).toEqual([{ context, raw: response, status: 429, header: '3', body: 'too many', again: true }]);
        expect((seen[0] as { context: unknown }).context).toBe(context);
    });

    test("body() of a browser's response (text()) and of a fetch Response (read from a clone)", async () => {
        const bodies: (string | undefined)[] = [];
        const { manager, next } = setup(async (_context, response) => {
            bodies.push(await response.body());
            return undefined;
        });
        const request = await next();
        const browserResponse = { status: () => 200, headers: () => ({}), text: async () => 'from the page' };
        await manager.handleResponse({ request, response: browserResponse }, browserResponse);
        const fetched = new Response('from fetch', { status: 200 });
        await manager.handleResponse({ request }, fetched);
        expect(fetched.bodyUsed).toBe(false);
        await expect(fetched.text()).resolves.toBe('from fetch');
        // A stream the crawler does not hold in its context is not read from under it.
        const foreign = streamed(200, 'not ours to read');
        await manager.handleResponse({ request }, foreign);
        expect(bodies).toEqual(['from the page', 'from fetch', undefined]);
        await expect(readAll(foreign)).resolves.toBe('not ours to read');
    });

    test('an answer other than the two verdicts or undefined is an error that says what is allowed', async () => {
        const { manager, next } = setup((() => 'nope') as never);
        const request = await next();
        await expect(manager.handleResponse({ request }, { statusCode: 200, headers: {} })).rejects.toThrow(
            new ThrottlingOptionsError(`refusalWhen returned "nope"; it must return 'refused', 'blocked' or undefined`),
        );
    });
});

describe('refusalWhen: validation', () => {
    const make = (refusalWhen: unknown) => () =>
        new ThrottlingRequestManager({ domains: 'all', refusalWhen: refusalWhen as RefusalWhen });

    test.each<[unknown, string]>([
        [
            42,
            "`refusalWhen`: refusalWhen must be a function (context, response) => 'refused' | 'blocked' | undefined, or { statusCodes?, bodyPattern?, headerPattern? }",
        ],
        ['430', 'refusalWhen must be a function'],
        [{}, '`refusalWhen`: refusalWhen needs at least one of statusCodes, bodyPattern, headerPattern'],
        [
            { statusCodes: [99] },
            '`refusalWhen.statusCodes.0`: refusalWhen.statusCodes must be a list of HTTP status codes (100-599)',
        ],
        [{ statusCodes: [] }, 'refusalWhen.statusCodes must not be empty'],
        [
            { bodyPattern: '' },
            '`refusalWhen.bodyPattern`: refusalWhen.bodyPattern must be a non-empty string (matched as a substring) or a RegExp',
        ],
        [
            { headerPattern: { name: 'x' } },
            '`refusalWhen.headerPattern.pattern`: refusalWhen.headerPattern.pattern must be',
        ],
        [
            { status: [430] },
            '`refusalWhen`: refusalWhen has unknown field(s) `status` (allowed: statusCodes, bodyPattern, headerPattern)',
        ],
    ])('%j is refused with a message naming it', (value, message) => {
        expect(make(value)).toThrow(ThrottlingOptionsError);
        expect(make(value)).toThrow(message);
    });

    test('a function and the shorthand forms are accepted', () => {
        expect(make(() => undefined)).not.toThrow();
        expect(make({ statusCodes: [430] })).not.toThrow();
        expect(make({ bodyPattern: /x/, headerPattern: { name: 'cf-mitigated', pattern: 'challenge' } })).not.toThrow();
    });
});
