/** Errors that say the server is overloaded or unreachable, not that our code failed. */
const NETWORK_ERROR =
    /ETIMEDOUT|ESOCKETTIMEDOUT|ECONNRESET|ECONNREFUSED|ECONNABORTED|EPIPE|EHOSTUNREACH|EAI_AGAIN|socket hang up|net::ERR_(?:CONNECTION|TIMED_OUT|EMPTY_RESPONSE)|Navigation timed out|navigation timeout|Timeout awaiting|Request timed out|ERR_GOT_REQUEST_ERROR/i;

/** Whether an error message (as Crawlee stores it in `request.errorMessages`) is a network error or timeout. */
export function isNetworkErrorMessage(message: unknown): boolean {
    return NETWORK_ERROR.test(String(message ?? ''));
}

/**
 * The network error a request came back with, if its error count grew since it was handed out
 * (`errorsAtHandout`) and the newest error is a network error or timeout.
 */
export function newNetworkError(errorMessages: readonly unknown[] | undefined, errorsAtHandout: number): boolean {
    const messages = errorMessages ?? [];
    if (messages.length <= errorsAtHandout) return false;
    return isNetworkErrorMessage(messages[messages.length - 1]);
}
