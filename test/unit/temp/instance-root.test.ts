import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { instanceRoot, ownerAlive, processStartTime, sweepDeadInstances } from '../../../src/temp/instance-root.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'instance-root-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function fakeRoot(name: string, owner?: string): string {
  const dir = path.join(tmp, name);
  mkdirSync(path.join(dir, 'office-abc123', 'jobs', 'job'), { recursive: true });
  writeFileSync(path.join(dir, 'office-abc123', 'jobs', 'job', 'input.docx'), 'a caller document');
  if (owner !== undefined) writeFileSync(path.join(dir, 'owner'), owner);
  return dir;
}

describe('instance roots', () => {
  it('this instance’s root holds an owner file naming this process, and is reused', () => {
    const root = instanceRoot();
    expect(path.basename(root)).toMatch(new RegExp(`^docproc-${process.pid}-`));
    expect(instanceRoot()).toBe(root);
    expect(ownerAlive(`${process.pid} ${processStartTime(process.pid)}`)).toBe(true);
  });

  it('sweeps roots of dead owners and of recycled pids, never a live owner’s', async () => {
    const dead = fakeRoot('docproc-4194999-aaaaaa', '4194999 12345');
    const recycled = fakeRoot('docproc-1-bbbbbb', '1 999999999999'); // pid 1 lives, but started at another time
    const live = fakeRoot(`docproc-${process.pid}-cccccc`, `${process.pid} ${processStartTime(process.pid)}`);
    const cutShort = fakeRoot('docproc-4194998-dddddd'); // no owner file: judged by the pid in the name
    const legacy = fakeRoot('docproc-office-4194997-eeeeee');
    const unrelated = fakeRoot('docproc-test-ffffff');
    const seen: number[] = [];
    const removed = await sweepDeadInstances(tmp, (_dir, pid) => void seen.push(pid));
    expect(removed.sort()).toEqual([dead, recycled, cutShort, legacy].sort());
    for (const dir of [dead, recycled, cutShort, legacy]) expect(existsSync(dir)).toBe(false);
    for (const dir of [live, unrelated]) expect(existsSync(dir)).toBe(true);
    expect(seen.sort()).toEqual([1, 4194997, 4194998, 4194999]);
  });
});
