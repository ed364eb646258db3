/** The origin of a URL, or the URL itself when it does not parse (it then counts as its own origin). */
export function originOf(url: string): string {
    try {
        return new URL(url).origin;
    } catch {
        return url;
    }
}
