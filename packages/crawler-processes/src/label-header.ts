/** The header a crawler process sends its label in (the polite web logs it per request). */
export const LABEL_HEADER = 'x-crawler-process';

/**
 * A pre-navigation hook that sends `label` as the {@link LABEL_HEADER} header, so the sites can
 * tell which process fetched each page.
 */
export function labelHeader(
    label: string,
): (_ctx: unknown, gotOptions: { headers?: Record<string, string | string[] | undefined> }) => void {
    return (_ctx, gotOptions) => {
        gotOptions.headers = { ...gotOptions.headers, [LABEL_HEADER]: label };
    };
}
