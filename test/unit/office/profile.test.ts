import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROFILE_SETTINGS, registryModificationsXcu, writeProfile } from '../../../src/office/profile.js';

const item = (p: string, name: string, value: string) =>
  `<item oor:path="${p}"><prop oor:name="${name}" oor:op="fuse"><value>${value}</value></prop></item>`;

describe('LibreOffice profile', () => {
  const xcu = registryModificationsXcu();

  it('blocks macros and untrusted linked content', () => {
    const scripting = '/org.openoffice.Office.Common/Security/Scripting';
    expect(xcu).toContain(item(scripting, 'BlockUntrustedRefererLinks', 'true'));
    expect(xcu).toContain(item(scripting, 'DisableMacrosExecution', 'true'));
    expect(xcu).toContain(item(scripting, 'MacroSecurityLevel', '3'));
    expect(xcu).toContain(item('/org.openoffice.Office.Writer/Content/Update', 'Link', '2'));
  });

  it('routes network access to a dead loopback proxy', () => {
    expect(xcu).toContain(item('/org.openoffice.Inet/Settings', 'ooInetProxyType', '1'));
    expect(xcu).toContain(item('/org.openoffice.Inet/Settings', 'ooInetHTTPProxyName', '127.0.0.1'));
    expect(xcu).toContain(item('/org.openoffice.Inet/Settings', 'ooInetHTTPSProxyName', '127.0.0.1'));
  });

  it('turns off update checks, first-start wizard and recovery', () => {
    expect(xcu).toMatch(/Job\[&apos;UpdateCheck&apos;\]\/Arguments"><prop oor:name="AutoCheckEnabled" oor:op="fuse"><value>false</);
    expect(xcu).toContain(item('/org.openoffice.Office.Common/Misc', 'FirstRun', 'false'));
    expect(xcu).toContain(item('/org.openoffice.Office.Recovery/AutoSave', 'Enabled', 'false'));
    expect(xcu).toContain(item('/org.openoffice.Office.Recovery/RecoveryInfo', 'Enabled', 'false'));
  });

  it('is a well-formed items document with one item per setting', () => {
    expect(xcu.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<oor:items ')).toBe(true);
    expect(xcu.trimEnd().endsWith('</oor:items>')).toBe(true);
    expect(xcu.match(/<item /g)).toHaveLength(PROFILE_SETTINGS.length);
    expect(xcu.match(/<\/item>/g)).toHaveLength(PROFILE_SETTINGS.length);
  });

  it('escapes XML special characters in values', () => {
    const text = registryModificationsXcu([{ path: '/a', name: 'b', type: 'string', value: `<x & "y">` }]);
    expect(text).toContain('<value>&lt;x &amp; &quot;y&quot;&gt;</value>');
  });

  const dirs: string[] = [];
  afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

  it('writes user/registrymodifications.xcu into the profile directory', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'docproc-profile-test-'));
    dirs.push(dir);
    await writeProfile(dir);
    expect(await readFile(path.join(dir, 'user', 'registrymodifications.xcu'), 'utf8')).toBe(xcu);
  });
});
