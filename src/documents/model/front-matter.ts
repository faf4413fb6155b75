import { warning, type Warning } from '../warnings.js';
import { parse } from 'yaml';
import type { DocumentMetadata } from './types.js';

/** Reads title/author/subject/keywords/date/description from YAML front matter. */
function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object' && 'name' in value) return asText((value as { name: unknown }).name);
  return undefined;
}

function asList(value: unknown): string[] | undefined {
  const list = Array.isArray(value) ? value.map(asText) : asText(value)?.split(/[,;]/).map((s) => s.trim());
  const clean = list?.filter((s): s is string => Boolean(s));
  return clean && clean.length > 0 ? clean : undefined;
}

export function readFrontMatter(yaml: string, warnings: Warning[]): DocumentMetadata {
  let data: unknown;
  try {
    data = parse(yaml, { maxAliasCount: 50 });
  } catch (err) {
    warnings.push(warning('FRONT_MATTER_IGNORED', `The YAML front matter could not be read (${(err as Error).message.split('\n')[0]}); it was ignored.`));
    return {};
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return {};
  const meta = data as Record<string, unknown>;
  return {
    title: asText(meta.title),
    author: asList(meta.author ?? meta.authors)?.join('; '),
    subject: asText(meta.subject ?? meta.subtitle),
    keywords: asList(meta.keywords ?? meta.tags),
    description: asText(meta.description ?? meta.abstract),
    date: asText(meta.date),
  };
}
