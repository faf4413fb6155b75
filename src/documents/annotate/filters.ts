/**
 * The filters a tag can use (`{name | upper}`, `{due | date:'DD MMMM YYYY':'de'}`). A value a filter
 * cannot read (a date filter on "soon") is left as given and a warning names the tag; an unknown
 * filter is a template error. Missing values stay missing (so strict mode still sees them), except
 * through `default`.
 */
export interface FilterContext {
  warn(message: string): void;
}

export type Filter = (input: unknown, args: unknown[], context: FilterContext) => unknown;

export class UnknownFilterError extends Error {
  constructor(readonly filter: string, readonly tag: string) {
    super(`unknown filter "${filter}" in {${tag}}; the filters are ${Object.keys(FILTERS).join(', ')}`);
    this.name = 'UnknownFilterError';
  }
}

const isMissing = (value: unknown) => value === undefined || value === null;

/** Text of plain data, never calling into it (JSON can carry a "toString" key). */
export function textOf(value: unknown): string {
  if (isMissing(value)) return '';
  if (typeof value !== 'object') return String(value);
  return Array.isArray(value) ? value.map(textOf).join(',') : '[object Object]';
}

function text(transform: (value: string) => string): Filter {
  return (input) => (isMissing(input) ? input : transform(textOf(input)));
}

const DEFAULT_LOCALE = 'en-US';

function localeOf(arg: unknown, context: FilterContext): string {
  if (arg === undefined || arg === null || arg === '') return DEFAULT_LOCALE;
  try {
    return Intl.getCanonicalLocales(textOf(arg))[0] ?? DEFAULT_LOCALE;
  } catch {
    context.warn(`"${textOf(arg)}" is not a locale; ${DEFAULT_LOCALE} was used.`);
    return DEFAULT_LOCALE;
  }
}

/** Calendar fields as written: a date's wall-clock time is shown as given, never shifted to another zone. */
interface CalendarDate {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function calendarDate(input: unknown): CalendarDate | null {
  if (typeof input === 'number' && Number.isFinite(input) && Math.abs(input) <= 8.64e15) {
    const d = new Date(input); // epoch milliseconds, shown in UTC
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
  }
  if (typeof input !== 'string') return null;
  const m = ISO_DATE.exec(input.trim());
  if (!m) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((part) => (part === undefined ? undefined : Number(part))) as number[];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return null;
  return { year, month, day, hour, minute, second };
}

function nameOf(date: CalendarDate, locale: string, options: Intl.DateTimeFormatOptions): string {
  return new Intl.DateTimeFormat(locale, { ...options, timeZone: 'UTC' }).format(new Date(Date.UTC(date.year, date.month - 1, date.day)));
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');
const DATE_FIELDS = 'YYYY|YY|MMMM|MMM|MM|M|DD|D|dddd|ddd|HH|H|hh|h|mm|ss|A|a';
const DATE_TOKENS = new RegExp(`\\[([^\\]]*)\\]|${DATE_FIELDS}`, 'g');
const DATE_FIELDS_ONLY = new RegExp(DATE_FIELDS, 'g');

/**
 * The pattern with each token replaced. After the last `]` no `[literal]` can end, so the fields there
 * are matched alone: a `[` without its `]` rescanned the rest of the pattern from each `[`.
 */
function replaceDateTokens(pattern: string, replace: (token: string, literal?: string) => string): string {
  const end = pattern.lastIndexOf(']') + 1;
  return pattern.slice(0, end).replace(DATE_TOKENS, replace) + pattern.slice(end).replace(DATE_FIELDS_ONLY, (token) => replace(token));
}

function formatCalendarDate(date: CalendarDate, pattern: string, locale: string): string {
  const hour12 = date.hour % 12 === 0 ? 12 : date.hour % 12;
  return replaceDateTokens(pattern, (token, literal) => {
    if (literal !== undefined) return literal;
    switch (token) {
      case 'YYYY': return pad(date.year, 4);
      case 'YY': return pad(date.year % 100);
      case 'MMMM': return nameOf(date, locale, { month: 'long' });
      case 'MMM': return nameOf(date, locale, { month: 'short' });
      case 'MM': return pad(date.month);
      case 'M': return String(date.month);
      case 'DD': return pad(date.day);
      case 'D': return String(date.day);
      case 'dddd': return nameOf(date, locale, { weekday: 'long' });
      case 'ddd': return nameOf(date, locale, { weekday: 'short' });
      case 'HH': return pad(date.hour);
      case 'H': return String(date.hour);
      case 'hh': return pad(hour12);
      case 'h': return String(hour12);
      case 'mm': return pad(date.minute);
      case 'ss': return pad(date.second);
      case 'A': return date.hour < 12 ? 'AM' : 'PM';
      default: return date.hour < 12 ? 'am' : 'pm';
    }
  });
}

const formatDate: Filter = (input, [pattern, locale], context) => {
  if (isMissing(input) || input === '') return input;
  const date = calendarDate(input);
  if (!date) {
    context.warn(`${JSON.stringify(input)} is not a date (YYYY-MM-DD, an ISO 8601 date-time or epoch milliseconds); it was left as given.`);
    return input;
  }
  const tag = localeOf(locale, context);
  if (pattern === undefined || pattern === null || pattern === '') {
    return new Intl.DateTimeFormat(tag, { dateStyle: 'long', timeZone: 'UTC' }).format(new Date(Date.UTC(date.year, date.month - 1, date.day)));
  }
  return formatCalendarDate(date, textOf(pattern), tag);
};

function numberOf(input: unknown): number | null {
  if (typeof input === 'number') return Number.isFinite(input) ? input : null;
  if (typeof input === 'string' && /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/.test(input)) return Number(input);
  return null;
}

function fractionDigits(arg: unknown): number | undefined {
  if (arg === undefined || arg === null || arg === '') return undefined;
  const digits = Number(arg);
  return Number.isInteger(digits) && digits >= 0 && digits <= 20 ? digits : undefined;
}

function numeric(format: (value: number, args: unknown[], context: FilterContext) => string): Filter {
  return (input, args, context) => {
    if (isMissing(input) || input === '') return input;
    const value = numberOf(input);
    if (value === null) {
      context.warn(`${JSON.stringify(input)} is not a number; it was left as given.`);
      return input;
    }
    return format(value, args, context);
  };
}

const formatNumber = numeric((value, [decimals, locale], context) => {
  const digits = fractionDigits(decimals);
  return new Intl.NumberFormat(localeOf(locale, context), digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(value);
});

const formatCurrency = numeric((value, [currency, locale], context) => {
  const code = typeof currency === 'string' && /^[A-Za-z]{3}$/.test(currency) ? currency.toUpperCase() : null;
  if (!code) {
    context.warn(`"${textOf(currency)}" is not an ISO 4217 currency code; the number was formatted without one.`);
    return new Intl.NumberFormat(localeOf(locale, context), { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(value);
  }
  return new Intl.NumberFormat(localeOf(locale, context), { style: 'currency', currency: code }).format(value);
});

/** The documented filters; their names are what templates may use. */
export const FILTERS: Record<string, Filter> = Object.assign(Object.create(null) as Record<string, Filter>, {
  upper: text((value) => value.toUpperCase()),
  lower: text((value) => value.toLowerCase()),
  trim: text((value) => value.trim()),
  capitalize: text((value) => value.charAt(0).toUpperCase() + value.slice(1)),
  default: (input: unknown, [fallback]: unknown[]) => (isMissing(input) || input === '' ? fallback : input),
  join: (input: unknown, [separator]: unknown[]) =>
    Array.isArray(input) ? input.map(textOf).join(isMissing(separator) ? ', ' : textOf(separator)) : input,
  length: (input: unknown) => (typeof input === 'string' || Array.isArray(input) ? input.length : isMissing(input) ? input : 0),
  date: formatDate,
  format: formatDate,
  formatDate,
  number: formatNumber,
  formatNumber,
  currency: formatCurrency,
} satisfies Record<string, Filter>);
