/** Where a request lands in a server's worker queue. */
export type QueueAdmission = { admitted: true; startAt: number; doneAt: number } | { admitted: false };

/**
 * A server with `workers` workers taking `serviceMs` per request from one FIFO queue: a request starts
 * when a worker is free, so response times grow with load and nothing is refused, unless `queueLimit`
 * caps the requests waiting (then one more is turned away, as a server with a full accept backlog).
 * Pure arithmetic on arrival times: the caller sends the response at `doneAt`. A request whose client
 * went away keeps its worker, as a server that does not notice a closed connection.
 */
export class WorkerQueue {
    // When each worker finishes its last admitted request, epoch ms.
    private readonly freeAt: number[];
    // Start times of admitted requests, to count those still waiting at an arrival.
    private starts: number[] = [];

    constructor(
        readonly workers: number,
        readonly serviceMs: number,
        readonly queueLimit: number | undefined,
    ) {
        this.freeAt = Array.from({ length: workers }, () => 0);
    }

    /** Requests admitted but not yet started at `now`. */
    waiting(now: number): number {
        this.starts = this.starts.filter((at) => at > now);
        return this.starts.length;
    }

    /** Admits a request arriving at `now`, or turns it away when the queue is full. */
    admit(now: number): QueueAdmission {
        let worker = 0;
        for (let i = 1; i < this.freeAt.length; i++) if (this.freeAt[i] < this.freeAt[worker]) worker = i;
        const startAt = Math.max(now, this.freeAt[worker]);
        if (startAt > now && this.queueLimit !== undefined && this.waiting(now) >= this.queueLimit) {
            return { admitted: false };
        }
        const doneAt = startAt + this.serviceMs;
        this.freeAt[worker] = doneAt;
        if (startAt > now) this.starts.push(startAt);
        return { admitted: true, startAt, doneAt };
    }

    /** Idles every worker, as a restarted server. */
    reset(): void {
        this.freeAt.fill(0);
        this.starts = [];
    }
}
