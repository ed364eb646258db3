import { ThrottlingOptionsError } from '../core/errors';
import type { NavigationContext } from './navigation-context';
import type { ResponseHeaders } from './rate-limit-headers';

/**
 * What `refusalWhen` makes of a response: `'refused'` is a rate limit (backs the domain off, retried
 * for free, as a 429); `'blocked'` goes to Crawlee's session handling (`RequestBlockedError`, a
 * `SessionError`: the session is retired and the request retried with another, no backoff).
 */
export type RefusalVerdict = 'refused' | 'blocked';

/** What `refusalWhen` sees of a response. */
export interface RefusalResponse {
    readonly statusCode: number;
    /** Header names lower-cased; a repeated header is a list. */
    readonly headers: ResponseHeaders;
    /** The URL that answered (after redirects), when the response says. */
    readonly url?: string;
    /**
     * The first 256 KiB of the body as text, read without taking the body from the crawler (see
     * `bodyReader`); undefined when the crawler's response cannot give it.
     */
    body(): Promise<string | undefined>;
    /** The crawler's own response object (got's stream, Playwright's or Puppeteer's response...). */
    readonly raw: unknown;
}

/**
 * Decides whether a response is a refusal the built-in rules would miss (Shopify's 430, a 200 "slow
 * down" page) or a block (a challenge page); undefined leaves it to the built-in rules
 * (`backoffStatusCodes`). May be async, e.g. to read the body.
 */
export type RefusalWhenFunction = (
    context: NavigationContext,
    response: RefusalResponse,
) => RefusalVerdict | undefined | Promise<RefusalVerdict | undefined>;

/** A text pattern: a string matches as a plain substring, a RegExp as a pattern. */
export type TextPattern = string | RegExp;

/**
 * The shorthand of `refusalWhen`: a response is `'refused'` when it meets every field given (at least
 * one): its status is one of `statusCodes`, its body matches `bodyPattern`, its header `name` matches
 * `pattern`. Anything else falls back to the built-in rules.
 */
export interface RefusalWhenShorthand {
    statusCodes?: readonly number[];
    bodyPattern?: TextPattern;
    headerPattern?: { name: string; pattern: TextPattern };
}

/** The `refusalWhen` option: a function, or the shorthand. */
export type RefusalWhen = RefusalWhenFunction | RefusalWhenShorthand;

/** `refusalWhen` as the interpreter calls it: always async, its answers checked. */
export type RefusalRule = (
    context: NavigationContext,
    response: RefusalResponse,
) => Promise<RefusalVerdict | undefined>;

/** `refusalWhen` as one function; its answers are checked (anything but the two verdicts or undefined throws). */
export function refusalRuleOf(when: RefusalWhen): RefusalRule {
    const rule = typeof when === 'function' ? when : shorthandRule(when);
    return async (context, response) => checkedVerdict(await rule(context, response));
}

function shorthandRule({ statusCodes, bodyPattern, headerPattern }: RefusalWhenShorthand): RefusalWhenFunction {
    const codes = statusCodes && new Set(statusCodes);
    return async (_context, response) => {
        if (codes && !codes.has(response.statusCode)) return undefined;
        if (headerPattern && !matches(headerText(response.headers, headerPattern.name), headerPattern.pattern)) {
            return undefined;
        }
        // Read last: only a response that met the other fields costs a body read.
        if (bodyPattern !== undefined && !matches(await response.body(), bodyPattern)) return undefined;
        return 'refused';
    };
}

function headerText(headers: ResponseHeaders, name: string): string | undefined {
    const value = headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
}

function matches(text: string | undefined, pattern: TextPattern): boolean {
    if (text === undefined) return false;
    if (typeof pattern === 'string') return text.includes(pattern);
    // A global or sticky RegExp remembers where it stopped; every response is matched from the start.
    pattern.lastIndex = 0;
    return pattern.test(text);
}

function checkedVerdict(verdict: unknown): RefusalVerdict | undefined {
    if (verdict === undefined || verdict === 'refused' || verdict === 'blocked') return verdict;
    throw new ThrottlingOptionsError(
        `refusalWhen returned ${JSON.stringify(verdict) ?? String(verdict)}; it must return 'refused', 'blocked' or undefined`,
    );
}
