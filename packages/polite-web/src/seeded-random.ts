/**
 * A small deterministic random source in [0, 1) (a 32-bit xorshift scrambled by a multiply), so a web
 * that picks requests to misbehave does so identically on every run with the same seed.
 */
export function seededRandom(seed: number): () => number {
    // xorshift has one fixed point, zero; move a zero seed off it.
    let state = (seed >>> 0 || 0x9e3779b9) >>> 0;
    return () => {
        state ^= state << 13;
        state >>>= 0;
        state ^= state >>> 17;
        state ^= state << 5;
        state >>>= 0;
        return (Math.imul(state, 0x2c1b3c6d) >>> 0) / 4294967296;
    };
}
