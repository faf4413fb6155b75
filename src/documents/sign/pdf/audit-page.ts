import { summariseEventData } from '../audit.js';
import type { AuditRecord } from '../types.js';
import type { FontKey, ShowText } from './fonts.js';
import { formatNumber, wrapText } from './text.js';

/**
 * Lays out the audit-trail certificate as page content streams (DejaVu Sans, see fonts.ts),
 * wrapping long values and continuing on as many pages as needed.
 */
export interface PageSize {
  width: number;
  height: number;
}

type Block =
  | { kind: 'title'; text: string }
  | { kind: 'note'; text: string }
  | { kind: 'heading'; text: string }
  | { kind: 'field'; label: string; value: string };

interface DrawnLine {
  text: string;
  font: FontKey;
  size: number;
  x: number;
  gray?: boolean;
  /** Vertical space this line takes, including the gap before it. */
  advance: number;
}

const MARGIN = 50;
const LABEL_WIDTH = 130;
/** The smallest page the audit layout reads well on: margins, the label column and ~25 characters of value. */
export const MIN_AUDIT_PAGE = { width: 2 * MARGIN + LABEL_WIDTH + 150, height: 300 };

const KNOWN_SIGNER_FIELDS = new Set(['name', 'email', 'ip', 'userAgent']);

/** The signer details beyond SuperDoc's four, labelled from their names (jobTitle → Job title). */
function otherSignerDetails(signer: AuditRecord['signer']): [string, string][] {
  return Object.entries(signer)
    .filter(([key, value]) => !KNOWN_SIGNER_FIELDS.has(key) && value !== null && value !== undefined && value !== '')
    .map(([key, value]) => {
      const words = key.replace(/[_-]+/g, ' ').replace(/([a-z0-9])([A-Z])/g, '$1 $2').trim().toLowerCase();
      return [words.charAt(0).toUpperCase() + words.slice(1), String(value)];
    });
}

function blocks(record: AuditRecord): Block[] {
  const field = (label: string, value: string | undefined): Block[] => (value ? [{ kind: 'field', label, value }] : []);
  const s = record.signature;
  return [
    { kind: 'title', text: 'Electronic signature audit trail' },
    { kind: 'note', text: 'Issued by docproc. This page and the attached audit-trail.json are part of the signed revision of this PDF: changing either invalidates the digital signature.' },
    { kind: 'heading', text: 'Document' },
    ...field('Title', record.document.title),
    ...field('SHA-256 (as received)', record.document.sha256),
    ...field('Size', `${record.document.bytes} bytes`),
    { kind: 'heading', text: 'Signer' },
    ...field('Name', record.signer.name),
    ...field('E-mail', record.signer.email),
    ...field('IP address', record.signer.ip),
    ...field('User agent', record.signer.userAgent),
    ...otherSignerDetails(record.signer).flatMap(([label, value]) => field(label, value)),
    { kind: 'heading', text: 'Signature' },
    ...field('Signed at (UTC)', record.signedAt),
    ...field('Reason', s.reason),
    ...field('Location', s.location),
    ...field('Certificate subject', s.certificateSubject),
    ...field('Certificate issuer', s.certificateIssuer),
    ...field('Certificate SHA-256', s.certificateFingerprint),
    ...field('Note', s.developmentCertificate ? 'Signed with a development certificate: not for production use.' : undefined),
    ...field('Timestamp authority', s.timestampAuthority),
    ...field('Event ID', record.eventId),
    ...field('Request ID', record.requestId),
    { kind: 'heading', text: `Audit events (${record.events.length})` },
    ...record.events.map((e): Block => {
      const data = summariseEventData(e);
      return { kind: 'field', label: e.type, value: data ? `${e.timestamp} - ${data}` : e.timestamp };
    }),
  ];
}

function toLines(items: Block[], contentWidth: number): DrawnLine[] {
  const lines: DrawnLine[] = [];
  for (const b of items) {
    if (b.kind === 'title') lines.push({ text: b.text, font: 'bold', size: 16, x: 0, advance: 20 });
    else if (b.kind === 'heading') lines.push({ text: b.text, font: 'bold', size: 11, x: 0, advance: 24 });
    else if (b.kind === 'note') {
      wrapText(b.text, 'regular', 8.5, contentWidth).forEach((t, i) =>
        lines.push({ text: t, font: 'regular', size: 8.5, x: 0, gray: true, advance: i === 0 ? 16 : 11 }));
    } else {
      const values = wrapText(b.value, 'regular', 9, contentWidth - LABEL_WIDTH);
      const label = wrapText(b.label, 'bold', 9, LABEL_WIDTH - 8)[0];
      values.forEach((t, i) => {
        if (i === 0) lines.push({ text: label, font: 'bold', size: 9, x: 0, advance: 14 });
        lines.push({ text: t, font: 'regular', size: 9, x: LABEL_WIDTH, advance: i === 0 ? 0 : 11.5 });
      });
    }
  }
  return lines;
}

const FONT_RESOURCE: Record<FontKey, string> = { regular: '/F1', bold: '/F2' };

/** Content streams, one per page; fonts are /F1 (regular) and /F2 (bold). */
export function auditPageContents(record: AuditRecord, page: PageSize, showText: ShowText): string[] {
  const contentWidth = page.width - 2 * MARGIN;
  const lines = toLines(blocks(record), contentWidth);
  const bottom = MARGIN + 24;
  const pages: DrawnLine[][] = [[]];
  let y = page.height - MARGIN;
  for (const line of lines) {
    if (y - line.advance < bottom && line.advance > 0) {
      pages.push([]);
      y = page.height - MARGIN;
    }
    y -= line.advance;
    pages[pages.length - 1].push({ ...line, advance: y });
  }
  return pages.map((drawn, index) => {
    const ops: string[] = [];
    for (const line of drawn) {
      ops.push(`BT ${FONT_RESOURCE[line.font]} ${line.size} Tf ${line.gray ? '0.35 g' : '0 g'} ${formatNumber(MARGIN + line.x)} ${formatNumber(line.advance)} Td ${showText(line.text, line.font)} Tj ET`);
    }
    const footer = `docproc signature audit trail - page ${index + 1} of ${pages.length}`;
    ops.push(`0.6 G 0.5 w ${MARGIN} ${MARGIN + 14} m ${formatNumber(page.width - MARGIN)} ${MARGIN + 14} l S`);
    ops.push(`BT /F1 8 Tf 0.35 g ${MARGIN} ${MARGIN} Td ${showText(footer, 'regular')} Tj ET`);
    return ops.join('\n');
  });
}
