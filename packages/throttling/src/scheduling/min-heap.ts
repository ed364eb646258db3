/**
 * A binary min-heap ordered by a numeric key fixed at insertion: the waiting domains ordered by
 * the time they become ready, so finding the due ones costs O(log n) instead of a scan of every
 * domain on each fetch.
 */
export class MinHeap<T> {
    // Parallel arrays keep keys unboxed and the heap cache-friendly.
    private readonly keys: number[] = [];
    private readonly items: T[] = [];

    get size(): number {
        return this.items.length;
    }

    push(key: number, item: T): void {
        this.keys.push(key);
        this.items.push(item);
        this.siftUp(this.items.length - 1);
    }

    peekKey(): number | undefined {
        return this.keys[0];
    }

    peek(): T | undefined {
        return this.items[0];
    }

    pop(): T | undefined {
        if (this.items.length === 0) return undefined;
        const top = this.items[0];
        const lastKey = this.keys.pop()!;
        const lastItem = this.items.pop()!;
        if (this.items.length > 0) {
            this.keys[0] = lastKey;
            this.items[0] = lastItem;
            this.siftDown(0);
        }
        return top;
    }

    clear(): void {
        this.keys.length = 0;
        this.items.length = 0;
    }

    private siftUp(index: number): void {
        let i = index;
        while (i > 0) {
            const parent = (i - 1) >> 1;
            if (this.keys[parent] <= this.keys[i]) break;
            this.swap(i, parent);
            i = parent;
        }
    }

    private siftDown(index: number): void {
        const n = this.items.length;
        let i = index;
        for (;;) {
            const left = 2 * i + 1;
            const right = left + 1;
            let smallest = i;
            if (left < n && this.keys[left] < this.keys[smallest]) smallest = left;
            if (right < n && this.keys[right] < this.keys[smallest]) smallest = right;
            if (smallest === i) return;
            this.swap(i, smallest);
            i = smallest;
        }
    }

    private swap(a: number, b: number): void {
        [this.keys[a], this.keys[b]] = [this.keys[b], this.keys[a]];
        [this.items[a], this.items[b]] = [this.items[b], this.items[a]];
    }
}
