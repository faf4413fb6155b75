import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { escapeXml } from '../documents/ooxml/xml-text.js';

/**
 * The LibreOffice user profile every office process starts with. Documents come from
 * strangers, so the profile switches off everything that could reach outside the document:
 * macros, links to other files or URLs, network access (a proxy that goes nowhere), update
 * checks, and anything that writes documents to disk behind our back (autosave, recovery).
 */
export interface ProfileSetting {
  /** Configuration path, e.g. "/org.openoffice.Office.Common/Security/Scripting". */
  path: string;
  name: string;
  type: 'boolean' | 'int' | 'string';
  value: boolean | number | string;
}

/** A proxy on a loopback port nothing listens on: any HTTP(S)/FTP fetch LibreOffice attempts fails. */
const DEAD_PROXY_HOST = '127.0.0.1';
const DEAD_PROXY_PORT = 9;

export const PROFILE_SETTINGS: readonly ProfileSetting[] = [
  // Macros and remote content.
  { path: '/org.openoffice.Office.Common/Security/Scripting', name: 'MacroSecurityLevel', type: 'int', value: 3 },
  { path: '/org.openoffice.Office.Common/Security/Scripting', name: 'DisableMacrosExecution', type: 'boolean', value: true },
  { path: '/org.openoffice.Office.Common/Security/Scripting', name: 'BlockUntrustedRefererLinks', type: 'boolean', value: true },
  // Links to other files (OLE links, DDE, linked sections and images) are never updated.
  { path: '/org.openoffice.Office.Writer/Content/Update', name: 'Link', type: 'int', value: 2 },
  { path: '/org.openoffice.Office.Calc/Content/Update', name: 'Link', type: 'int', value: 2 },
  // No network: every protocol goes through a proxy that refuses connections.
  { path: '/org.openoffice.Inet/Settings', name: 'ooInetProxyType', type: 'int', value: 1 },
  { path: '/org.openoffice.Inet/Settings', name: 'ooInetNoProxy', type: 'string', value: '' },
  { path: '/org.openoffice.Inet/Settings', name: 'ooInetHTTPProxyName', type: 'string', value: DEAD_PROXY_HOST },
  { path: '/org.openoffice.Inet/Settings', name: 'ooInetHTTPProxyPort', type: 'int', value: DEAD_PROXY_PORT },
  { path: '/org.openoffice.Inet/Settings', name: 'ooInetHTTPSProxyName', type: 'string', value: DEAD_PROXY_HOST },
  { path: '/org.openoffice.Inet/Settings', name: 'ooInetHTTPSProxyPort', type: 'int', value: DEAD_PROXY_PORT },
  { path: '/org.openoffice.Inet/Settings', name: 'ooInetFTPProxyName', type: 'string', value: DEAD_PROXY_HOST },
  { path: '/org.openoffice.Inet/Settings', name: 'ooInetFTPProxyPort', type: 'int', value: DEAD_PROXY_PORT },
  // No update checks, first-start wizard, tips, or crash reporting.
  { path: '/org.openoffice.Office.Jobs/Jobs/org.openoffice.Office.Jobs:Job[\'UpdateCheck\']/Arguments', name: 'AutoCheckEnabled', type: 'boolean', value: false },
  { path: '/org.openoffice.Setup/Office', name: 'ooSetupInstCompleted', type: 'boolean', value: true },
  { path: '/org.openoffice.Office.Common/Misc', name: 'FirstRun', type: 'boolean', value: false },
  { path: '/org.openoffice.Office.Common/Misc', name: 'ShowTipOfTheDay', type: 'boolean', value: false },
  { path: '/org.openoffice.Office.Common/Misc', name: 'CrashReport', type: 'boolean', value: false },
  // No lock files next to the documents we open (each job's file is private anyway).
  { path: '/org.openoffice.Office.Common/Misc', name: 'UseDocumentOOoLockFile', type: 'boolean', value: false },
  { path: '/org.openoffice.Office.Common/Misc', name: 'UseDocumentSystemFileLocking', type: 'boolean', value: false },
  // No autosave, backup copies or recovery data.
  { path: '/org.openoffice.Office.Recovery/AutoSave', name: 'Enabled', type: 'boolean', value: false },
  { path: '/org.openoffice.Office.Recovery/AutoSave', name: 'UserAutoSaveEnabled', type: 'boolean', value: false },
  { path: '/org.openoffice.Office.Recovery/RecoveryInfo', name: 'Enabled', type: 'boolean', value: false },
  { path: '/org.openoffice.Office.Common/Save/Document', name: 'CreateBackup', type: 'boolean', value: false },
  { path: '/org.openoffice.Office.Common/Save/Document', name: 'AutoSave', type: 'boolean', value: false },
];


function itemXml(setting: ProfileSetting): string {
  const value = typeof setting.value === 'boolean' ? String(setting.value) : escapeXml(String(setting.value));
  return (
    `<item oor:path="${escapeXml(setting.path)}"><prop oor:name="${setting.name}" oor:op="fuse">` +
    `<value>${value}</value></prop></item>`
  );
}

/** The registrymodifications.xcu text for the given settings. */
export function registryModificationsXcu(settings: readonly ProfileSetting[] = PROFILE_SETTINGS): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
    ...settings.map(itemXml),
    '</oor:items>',
    '',
  ].join('\n');
}

/** Lays out a fresh profile in `profileDir` (which must exist and be private to one process). */
export async function writeProfile(profileDir: string): Promise<void> {
  const userDir = path.join(profileDir, 'user');
  await mkdir(userDir, { recursive: true, mode: 0o700 });
  await writeFile(path.join(userDir, 'registrymodifications.xcu'), registryModificationsXcu(), { mode: 0o600 });
}
