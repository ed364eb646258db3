import { cpus, loadavg } from 'node:os';

/** What the machine and this process did over a stretch of time. */
export interface MachineUsage {
    /** Cores busy on average (all processes of the machine, niced ones included), e.g. 1.4 of 2. */
    busyCores: number;
    /** CPU time of this process (in B7: polite-web and the bookkeeping), ms. */
    ownCpuMs: number;
    /** One-minute load average at the start and at the end. */
    loadStart: number;
    loadEnd: number;
}

interface CpuTimes {
    busy: number;
    total: number;
}

function cpuTimes(): CpuTimes {
    let busy = 0;
    let total = 0;
    for (const { times } of cpus()) {
        const b = times.user + times.nice + times.sys + times.irq;
        busy += b;
        total += b + times.idle;
    }
    return { busy, total };
}

/** Busy cores between two readings: the busy share of all CPU time, times the cores. */
export function busyCoresBetween(start: CpuTimes, end: CpuTimes, cores: number): number {
    const total = end.total - start.total;
    return total > 0 ? ((end.busy - start.busy) / total) * cores : 0;
}

/** Starts measuring; the returned function ends the stretch and reports it. */
export function measureMachine(): () => MachineUsage {
    const times = cpuTimes();
    const own = process.cpuUsage();
    const loadStart = loadavg()[0];
    return () => {
        const ownNow = process.cpuUsage(own);
        return {
            busyCores: busyCoresBetween(times, cpuTimes(), cpus().length),
            ownCpuMs: Math.round((ownNow.user + ownNow.system) / 1000),
            loadStart,
            loadEnd: loadavg()[0],
        };
    };
}
