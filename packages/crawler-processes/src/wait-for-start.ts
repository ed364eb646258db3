/**
 * Waits until `startAt` (epoch ms, the same for every process of a run), so that processes which
 * loaded at different speeds start crawling together. Answers how late this one was, ms (0 when on time).
 */
export async function waitForStart(startAt: number, now: () => number = Date.now): Promise<number> {
    const wait = startAt - now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return Math.max(0, -wait);
}
