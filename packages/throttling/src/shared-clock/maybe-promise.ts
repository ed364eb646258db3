/** A value now, or later: what a shared clock answers (a file clock at once, Redis after a round trip). */
export type MaybePromise<T> = T | Promise<T>;

/** Whether a value is a promise (a thenable), so a synchronous answer stays synchronous. */
export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
    return typeof (value as { then?: unknown } | null)?.then === 'function';
}
