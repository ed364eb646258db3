/** The line a worker prints its result on: this prefix, then the result as JSON. */
export const RESULT_PREFIX = 'RESULT ';
