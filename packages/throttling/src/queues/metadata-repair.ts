import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { localQueuesDirectory } from './stale-locks';

/** The file memory-storage keeps a queue's id, name and counts in. */
const METADATA_FILE = '__metadata__.json';

/**
 * The leading JSON object of `text` when what follows it is not JSON, else undefined.
 *
 * memory-storage rewrites a queue's `__metadata__.json` with an unlocked `writeFile` on nearly every
 * call, so two calls in flight on one queue can interleave: both truncate, then the shorter write
 * lands over the longer one and leaves its tail behind. What leads the file is then one whole write.
 */
export function leadingJsonObject(text: string): string | undefined {
    if (!text.startsWith('{')) return undefined;
    let depth = 0;
    let inString = false;
    for (let i = 0; i < text.length; i += 1) {
        const c = text[i];
        if (inString) {
            if (c === '\\') i += 1;
            else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === '{') depth += 1;
        else if (c === '}' && --depth === 0) {
            const head = text.slice(0, i + 1);
            if (text.slice(i + 1).trim() === '') return undefined;
            try {
                JSON.parse(head);
                return head;
            } catch {
                return undefined;
            }
        }
    }
    return undefined;
}

/**
 * Rewrites a queue folder's metadata file to its leading whole write when two interleaved writes left
 * it unreadable. Answers whether it changed the file.
 */
export async function repairQueueMetadata(folder: string): Promise<boolean> {
    const path = join(folder, METADATA_FILE);
    const text = await readFile(path, 'utf8').catch(() => undefined);
    const head = text === undefined ? undefined : leadingJsonObject(text);
    if (head === undefined) return false;
    await writeFile(path, head);
    return true;
}

/**
 * Opens a queue; on local storage, a metadata file left unreadable by interleaved writes (a crawl
 * stopped right after two calls on one queue) is repaired and the open tried once more, so a resumed
 * crawl starts instead of throwing a SyntaxError. `idOrName` names the queue's folder.
 */
export async function openRepairingMetadata<T>(
    open: () => Promise<T>,
    storageClient: unknown,
    idOrName: string,
    warn: (message: string) => void = () => {},
): Promise<T> {
    try {
        return await open();
    } catch (error) {
        const directory = localQueuesDirectory(storageClient);
        if (!(error instanceof SyntaxError) || directory === undefined) throw error;
        const folder = join(directory, idOrName);
        if (!(await repairQueueMetadata(folder))) throw error;
        warn(
            `Repaired the metadata of request queue "${idOrName}" (${folder}): two interleaved writes had left it unreadable`,
        );
        return open();
    }
}
