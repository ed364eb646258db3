import { StorageCallTimeoutError } from '../core/errors';

/**
 * Waits for `call` at most `timeoutMs` (no limit when undefined). Past the limit it rejects with
 * {@link StorageCallTimeoutError}, so the caller can give back what it holds instead of holding it
 * forever; a value that still arrives later goes to `late` (to be put back, not lost). `what` names the
 * call in the error, asked only then.
 */
export function boundedCall<T>(
    call: Promise<T>,
    timeoutMs: number | undefined,
    what: () => string,
    late: (value: T) => void,
): Promise<T> {
    if (timeoutMs === undefined || !(timeoutMs > 0) || !Number.isFinite(timeoutMs)) return call;
    return new Promise<T>((resolve, reject) => {
        let timedOut = false;
        const timer = setTimeout(() => {
            timedOut = true;
            reject(new StorageCallTimeoutError(what(), timeoutMs));
        }, timeoutMs);
        // A hung storage call must not keep the process alive on its own.
        timer.unref();
        call.then(
            (value) => {
                clearTimeout(timer);
                if (timedOut) late(value);
                else resolve(value);
            },
            (error: unknown) => {
                clearTimeout(timer);
                if (!timedOut) reject(error);
            },
        );
    });
}
