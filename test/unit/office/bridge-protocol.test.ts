import { describe, expect, it } from 'vitest';
import { encodeRequest, LineDecoder, type BridgeMessage } from '../../../src/office/bridge-protocol.js';
import { officePipeFiles } from '../../../src/office/office-process.js';

function decoder() {
  const messages: BridgeMessage[] = [];
  const garbage: string[] = [];
  return { messages, garbage, decoder: new LineDecoder((m) => messages.push(m), (g) => garbage.push(g)) };
}

describe('bridge framing', () => {
  it('encodes one request per line', () => {
    const line = encodeRequest({ id: 7, op: 'convert', input: '/j/in.docx', output: '/j/out.pdf', trackedChanges: 'accept' });
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(line)).toEqual({ id: 7, op: 'convert', input: '/j/in.docx', output: '/j/out.pdf', trackedChanges: 'accept' });
  });

  it('keeps paths with newlines inside one line', () => {
    const line = encodeRequest({ id: 1, op: 'convert', input: '/j/a\nb.docx', output: '/j/o.pdf', trackedChanges: 'markup' });
    expect(line.indexOf('\n')).toBe(line.length - 1);
  });

  it('reassembles messages split across chunks and splits several in one chunk', () => {
    const { messages, garbage, decoder: d } = decoder();
    d.push('{"type":"ready","offi');
    expect(messages).toHaveLength(0);
    d.push('cePid":42}\n{"type":"result","id":1,"ok":true,"rss":10}\n{"type":"result","id":2,');
    d.push(Buffer.from('"ok":false,"kind":"load","message":"bad"}\n'));
    expect(messages).toEqual([
      { type: 'ready', officePid: 42 },
      { type: 'result', id: 1, ok: true, rss: 10 },
      { type: 'result', id: 2, ok: false, kind: 'load', message: 'bad' },
    ]);
    expect(garbage).toEqual([]);
  });

  it('reports lines that are not protocol messages', () => {
    const { messages, garbage, decoder: d } = decoder();
    d.push('warn: something\n{"type":"other"}\n\n{"type":"result","ok":true}\n');
    expect(messages).toEqual([]);
    expect(garbage).toEqual(['warn: something', '{"type":"other"}', '{"type":"result","ok":true}']);
  });
});

describe('office pipe files', () => {
  it('names the single-instance pipe after the MD5 of the UTF-16 profile URL, as LibreOffice does', () => {
    // Observed from LibreOffice 7.4 started with -env:UserInstallation=file:///tmp/offexp/prof
    const uid = process.getuid?.() ?? 0;
    expect(officePipeFiles('docproc-x', 'file:///tmp/offexp/prof')).toEqual([
      `/tmp/OSL_PIPE_${uid}_docproc-x`,
      `/tmp/OSL_PIPE_${uid}_SingleOfficeIPC_ba5bd5d2ee87433d2d934f05ade56c2`,
    ]);
  });
});
