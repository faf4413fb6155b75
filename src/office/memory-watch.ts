import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';

/**
 * The memory of one office process group (bubblewrap, the python bridge, oosplash, soffice.bin),
 * read from /proc. The members are found once by a scan of /proc and then only their statm is read,
 * a few microseconds per sample; the scan is repeated when a member has gone.
 */
const PAGE_BYTES = 4096;

/** Live pids whose process group is `pgid` (host numbering: the jail's pid namespace does not matter); zombies are left out. */
export function processGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      // Fields after the command name: state, ppid, pgrp, …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

export class GroupMemory {
  private statmPaths: string[] = [];
  /** One statm line (7 page counts); read into this, not readFileSync's fresh buffers, every 100 ms of every job. */
  private readonly line = Buffer.alloc(256);

  constructor(private readonly pgid: number) {}

  /** Resident bytes of the whole group now (0 when it has no member left). */
  rss(): number {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (this.statmPaths.length === 0) this.statmPaths = processGroupMembers(this.pgid).map((pid) => `/proc/${pid}/statm`);
      let total = 0;
      try {
        for (const statm of this.statmPaths) total += this.residentPages(statm) * PAGE_BYTES;
        return total;
      } catch {
        this.statmPaths = []; // a member has gone (or a new one came): find them again
      }
    }
    return 0;
  }

  /** The second field of a statm file (resident pages); throws when the process has gone. */
  private residentPages(statm: string): number {
    const fd = openSync(statm, 'r');
    let length: number;
    try {
      length = readSync(fd, this.line, 0, this.line.length, 0);
    } finally {
      closeSync(fd);
    }
    let at = this.line.indexOf(0x20);
    if (at < 0 || at >= length) throw new Error(`${statm}: no resident field`);
    let pages = 0;
    for (at++; at < length && this.line[at]! >= 0x30 && this.line[at]! <= 0x39; at++) pages = pages * 10 + this.line[at]! - 0x30;
    return pages;
  }
}

/**
 * The command prefix that makes the kernel refuse an office process more than `bytes` of data
 * (RLIMIT_DATA: heap and private writable mappings, not the mapped libraries and fonts), inherited
 * by everything it starts. Empty where util-linux's prlimit is missing (the RSS watch still holds).
 */
export function dataLimitPrefix(bytes: number | undefined, prlimitPath = '/usr/bin/prlimit'): string[] {
  if (!bytes || !existsSync(prlimitPath)) return [];
  return [prlimitPath, `--data=${bytes}:${bytes}`, '--'];
}
