/** A value now, or later: what a shared clock answers (a file clock at once, Redis after a round trip). */
export type MaybePromise<T> = T | Promise<T>;

/** Whether a value is a promise (a thenable), so a synchronous answer stays synchronous. */
export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
    return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** `next(value)`, at once when `value` is there, after it otherwise. */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
    return isPromise(value) ? value.then(next) : next(value);
}

/** How one call ended: its answer, or what it threw (at once or later). */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Runs `call`, catching a throw and a rejection alike; synchronous when the call is. */
export function outcomeOf<T>(call: () => MaybePromise<T>): MaybePromise<Outcome<T>> {
    try {
        const value = call();
        if (!isPromise(value)) return { ok: true, value };
        return value.then(
            (v): Outcome<T> => ({ ok: true, value: v }),
            (error: unknown): Outcome<T> => ({ ok: false, error }),
        );
    } catch (error) {
        return { ok: false, error };
    }
}

/** Every value, at once when none is a promise. */
export function allOf<T>(values: MaybePromise<T>[]): MaybePromise<T[]> {
    return values.some(isPromise) ? Promise.all(values) : (values as T[]);
}
