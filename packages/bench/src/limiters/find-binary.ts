import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The limiter binaries started as child processes, with where Debian puts them. */
export type LimiterBinary = 'nginx' | 'haproxy';

/** The script that installs them (from the repository root). */
export const INSTALL_SCRIPT = '.ci/install-limiters.sh';

/** Absolute path of an executable `name` on PATH or in the sbin directories, or undefined when missing. */
export function findBinary(name: LimiterBinary): string | undefined {
    const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];
    for (const dir of dirs.filter(Boolean)) {
        const candidate = join(dir, name);
        try {
            accessSync(candidate, constants.X_OK);
            return candidate;
        } catch {
            // not here
        }
    }
    return undefined;
}

/** Thrown when a real limiter's binary is not installed. */
export class MissingLimiterBinaryError extends Error {
    readonly code = 'ERR_LIMITER_BINARY_MISSING';

    constructor(readonly binary: LimiterBinary) {
        super(`${binary} is not installed (looked on PATH and in /usr/sbin); run ${INSTALL_SCRIPT} to install it`);
        this.name = 'MissingLimiterBinaryError';
    }
}
