/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux, whatever the kernel's HZ). */
export const USER_HZ = 100;

/**
 * The command name and utime + stime (ms) in the text of a /proc/PID/stat or /proc/PID/task/TID/stat
 * file. The name is in parentheses and may hold spaces and parentheses, so the fields are counted
 * from its last `)`.
 */
export function statCpu(stat: string): { comm: string; ms: number } {
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  return { comm: stat.slice(stat.indexOf('(') + 1, close), ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ };
}
