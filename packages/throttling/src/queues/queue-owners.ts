import { hostname } from 'node:os';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The processes that opened one queue folder of a local storage, kept in a dot-file inside it
 * (memory-storage ignores files starting with a dot). A later process reads it to tell whether
 * the locks it finds there can belong to anyone still running.
 */
export const QUEUE_OWNERS_FILE = '.throttling-owners.json';

/** One process that opened the queue. */
export interface QueueOwner {
    pid: number;
    host: string;
}

/** What a process found when it claimed a queue folder. */
export interface QueueClaim {
    /** Other processes recorded on the folder that may still run (alive here, or on another host). */
    liveOthers: QueueOwner[];
    /** This process had claimed the folder already (the queue was opened twice in one process). */
    alreadyOurs: boolean;
}

/** Whether a process of this host runs. EPERM means it runs under another user. */
export function processRuns(pid: number): boolean {
    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
}

async function readOwners(dir: string): Promise<QueueOwner[]> {
    try {
        const parsed = JSON.parse(await readFile(join(dir, QUEUE_OWNERS_FILE), 'utf8')) as unknown;
        if (!Array.isArray(parsed)) return [];
        return parsed.filter(
            (o): o is QueueOwner =>
                typeof o === 'object' && o !== null && Number.isInteger(o.pid) && typeof o.host === 'string',
        );
    } catch {
        // Missing (a queue stored before owners were recorded) or cut short by a kill: nobody known.
        return [];
    }
}

/**
 * Records this process as an owner of the queue folder `dir` and tells who else may be running.
 * A process on another host cannot be checked and counts as running.
 */
export async function claimQueueFolder(dir: string, self: QueueOwner = currentProcess()): Promise<QueueClaim> {
    const owners = await readOwners(dir);
    const alreadyOurs = owners.some((o) => o.pid === self.pid && o.host === self.host);
    const liveOthers = owners.filter(
        (o) => !(o.pid === self.pid && o.host === self.host) && (o.host !== self.host || processRuns(o.pid)),
    );
    if (!alreadyOurs) {
        // Written aside and renamed, so a kill mid-write never leaves a half-written record.
        const file = join(dir, QUEUE_OWNERS_FILE);
        const temp = `${file}.${self.pid}.tmp`;
        // A queue never written yet has no folder: storage creates it on its first write.
        await mkdir(dir, { recursive: true });
        await writeFile(temp, JSON.stringify([...liveOthers, self]));
        await rename(temp, file);
    }
    return { liveOthers, alreadyOurs };
}

export function currentProcess(): QueueOwner {
    return { pid: process.pid, host: hostname() };
}
