import type { RateLimitSchedule } from './site-options';

/**
 * Whether a scheduled rate limit is on at `now`, for a cycle started at `startedAt`. A clock that reads
 * before the start (a test stepping back) counts as the start of the cycle.
 */
export function scheduleIsOn(schedule: Readonly<Required<RateLimitSchedule>>, startedAt: number, now: number): boolean {
    const cycle = schedule.onMs + schedule.offMs;
    const intoCycle = (Math.max(0, now - startedAt) + schedule.phaseMs) % cycle;
    return intoCycle < schedule.onMs;
}
