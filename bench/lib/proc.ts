import fs from 'node:fs';

/** CPU time (s) a process of this machine has used, user + system, from /proc (Linux); null elsewhere or when it is gone. */
export function cpuSecondsOf(pid: number | null | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}
