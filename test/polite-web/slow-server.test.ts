import { startPoliteWeb, WorkerQueue, type PoliteWeb } from '@crawlee-throttling/polite-web';
import { get } from './http-helpers';

describe('WorkerQueue (workers and a FIFO queue)', () => {
    it('starts a request when a worker is free, so response times grow with load', () => {
        const queue = new WorkerQueue(2, 100, undefined);
        const done = [0, 0, 0, 0, 0].map(() => queue.admit(1_000));
        expect(done.map((a) => (a.admitted ? a.doneAt - 1_000 : -1))).toEqual([100, 100, 200, 200, 300]);
        expect(queue.waiting(1_000)).toBe(3);
        expect(queue.waiting(1_100)).toBe(1);
        expect(queue.waiting(1_200)).toBe(0);
    });

    it('serves arrivals spaced at the capacity without queueing', () => {
        const queue = new WorkerQueue(1, 50, undefined);
        for (let t = 0; t < 500; t += 50) {
            expect(queue.admit(t)).toEqual({ admitted: true, startAt: t, doneAt: t + 50 });
        }
    });

    it('turns a request away when queueLimit requests already wait, and admits again once one starts', () => {
        const queue = new WorkerQueue(1, 100, 2);
        expect(queue.admit(0)).toMatchObject({ admitted: true, startAt: 0 });
        expect(queue.admit(0)).toMatchObject({ admitted: true, startAt: 100 });
        expect(queue.admit(0)).toMatchObject({ admitted: true, startAt: 200 });
        expect(queue.admit(0)).toEqual({ admitted: false });
        expect(queue.admit(100)).toMatchObject({ admitted: true, startAt: 300 });
    });

    it('a queue limit of 0 serves only what the workers take at once', () => {
        const queue = new WorkerQueue(2, 100, 0);
        expect([0, 0, 0].map(() => queue.admit(0).admitted)).toEqual([true, true, false]);
    });

    it('reset() idles every worker', () => {
        const queue = new WorkerQueue(1, 100, undefined);
        queue.admit(0);
        queue.admit(0);
        queue.reset();
        expect(queue.admit(0)).toEqual({ admitted: true, startAt: 0, doneAt: 100 });
    });
});

describe('polite-web slow server (service)', () => {
    let web: PoliteWeb | undefined;
    afterEach(async () => {
        await web?.close();
        web = undefined;
    });

    it('answers concurrent requests one worker-time apart and logs each response time', async () => {
        web = await startPoliteWeb({ sites: [{ host: 'slow.example', service: { workers: 1, msPerPage: 100 } }] });
        const statuses = await Promise.all([0, 1, 2, 3].map((i) => get(web!, 'slow.example', `/page/${i}`)));
        expect(statuses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
        // One worker: the k-th answer cannot finish before k + 1 service times after the first arrival,
        // and at least one waited behind another (timers fire late, never early).
        const done = web.log.map((e) => e.respondedAt!).sort((a, b) => a - b);
        const firstArrival = Math.min(...web.log.map((e) => e.time));
        done.forEach((at, k) => expect(at - firstArrival).toBeGreaterThanOrEqual(100 * (k + 1) - 2));
        expect(Math.max(...web.log.map((e) => e.respondedAt! - e.time))).toBeGreaterThanOrEqual(150);
        expect(web.score().totals.refusals).toBe(0);
    });

    it('refuses with refusal.status once queueLimit requests wait', async () => {
        web = await startPoliteWeb({
            sites: [
                {
                    host: 'full.example',
                    service: { workers: 1, msPerPage: 300, queueLimit: 1 },
                    refusal: { status: 503 },
                },
            ],
        });
        const answers = await Promise.all([0, 1, 2, 3].map((i) => get(web!, 'full.example', `/page/${i}`)));
        expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 503, 503]);
        expect(web.log.filter((e) => e.refused)).toHaveLength(2);
    });

    it('rejects a service without workers, naming the option', async () => {
        await expect(
            startPoliteWeb({ sites: [{ host: 'a.example', service: { workers: 0, msPerPage: 10 } }] }),
        ).rejects.toThrow('site a.example: service.workers must be an integer >= 1, got 0');
    });
});
