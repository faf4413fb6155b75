/** Parses a PDF date string (D:YYYYMMDDHHmmSSOHH'mm') into an ISO string; null when unreadable. */
export function parsePdfDate(text: string | undefined): string | null {
  if (!text) return null;
  const m = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?\s*([Zz+-])?\s*(\d{2})?'?(\d{2})?'?/.exec(text.trim());
  if (!m) return null;
  const [year, month = '01', day = '01', hour = '00', minute = '00', second = '00'] = m.slice(1, 7) as string[];
  let offsetMinutes = 0;
  if (m[7] === '+' || m[7] === '-') offsetMinutes = (m[7] === '-' ? -1 : 1) * (Number(m[8] ?? 0) * 60 + Number(m[9] ?? 0));
  const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)) - offsetMinutes * 60_000;
  return Number.isFinite(utc) ? new Date(utc).toISOString() : null;
}
