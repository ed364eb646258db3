import type { DomainQueue } from '../core/domain-queue';
import type { OriginBook } from './origin-book';
import { anyOriginBlocked, everyOriginBlocked, robotsUnreachableFailure } from './origin-blocks';

/**
 * The origin gate's bookkeeping, one {@link OriginBook} per key that met a check (a key that never
 * did costs nothing here). `OriginGate` writes it; the others read it through the questions below.
 */
export class OriginBooks {
    // The book of each key with origin bookkeeping.
    private readonly books = new Map<DomainQueue, OriginBook>();

    /** The key's book, made on first use (the gate writes through it). */
    of(entry: DomainQueue): OriginBook {
        let book = this.books.get(entry);
        if (!book) {
            book = { gatesPending: 0 };
            this.books.set(entry, book);
        }
        return book;
    }

    /** The key's book if it has one, to read. */
    peek(entry: DomainQueue): Readonly<OriginBook> | undefined {
        return this.books.get(entry);
    }

    /** Requests are held until its origin checks (robots.txt) finish: one runs or is due. */
    holds(entry: DomainQueue): boolean {
        const book = this.books.get(entry);
        return book !== undefined && (book.gatesPending > 0 || book.checksDue !== undefined);
    }

    /** Held by checks that wait for the key's pace: the scheduler files it so they can start. */
    awaitsCheck(entry: DomainQueue): boolean {
        return this.books.get(entry)?.checksDue !== undefined;
    }

    /** Held only by checks already running: nothing to file it for until they settle. */
    checksRunning(entry: DomainQueue): boolean {
        const book = this.books.get(entry);
        return book !== undefined && book.gatesPending > 0 && book.checksDue === undefined;
    }

    /**
     * Nothing of the key's origins waits or runs at `now`: no check due, running or to be retried, no
     * retried read in a row, no block in force (a block that ended says nothing: it is checked again).
     */
    atRest(entry: DomainQueue, now: number): boolean {
        const book = this.books.get(entry);
        if (!book) return true;
        if (book.gatesPending > 0 || book.checksDue !== undefined || book.retryPending !== undefined) return false;
        return book.retriedOrigins === undefined && !anyOriginBlocked(book, now);
    }

    /** Whether every origin the key checked is blocked at `now` (see `everyOriginBlocked`). */
    everyBlocked(entry: DomainQueue, now: number): boolean {
        const book = this.books.get(entry);
        return book !== undefined && everyOriginBlocked(book, now);
    }

    /** The error a request of a blocked origin fails with, or undefined when its origin is not blocked. */
    failureOf(entry: DomainQueue, url: string, now: number): Error | undefined {
        const book = this.books.get(entry);
        return book && robotsUnreachableFailure(book, url, now);
    }

    /** Forgets a key's book (the key was evicted: met again, its origins are checked afresh). */
    forget(entry: DomainQueue): void {
        this.books.delete(entry);
    }

    /** Forgets every book (the queues were dropped). */
    clear(): void {
        this.books.clear();
    }
}
