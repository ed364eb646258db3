import type { Request } from '@crawlee/core';

/** One place requests are fetched from: the domain queues, or `inner`. */
export interface RequestSource {
    fetch(): Promise<Request | null>;
}

/**
 * Serves two sources, each call looking first where the previous one looked second, so a busy
 * `inner` cannot starve the domain queues (nor the other way round). The first call looks at `one`.
 */
export class AlternatingFetch {
    private oneFirst = true;

    constructor(
        private readonly one: RequestSource,
        private readonly other: RequestSource,
    ) {}

    async fetch(): Promise<Request | null> {
        const [first, second] = this.oneFirst ? [this.one, this.other] : [this.other, this.one];
        this.oneFirst = !this.oneFirst;
        return (await first.fetch()) ?? (await second.fetch());
    }
}
