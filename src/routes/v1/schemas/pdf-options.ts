import { Type, type TOptional, type TSchema } from '@sinclair/typebox';
import { IMAGE_RESOLUTIONS, PAGE_RANGES_PATTERN, PDFA_LEVELS, type PdfExportOptions } from '../../../documents/docx-pdf/index.js';
import { validationError } from '../../../errors/domain-error.js';
import { StringEnum } from './string-enum.js';

/**
 * The PDF options of every route that renders a PDF with LibreOffice (convert, annotate with
 * to=pdf, sign of a DOCX), with Gotenberg's names where it has one. The same names are accepted as
 * query parameters (typed, coerced from text) and as multipart text fields (text: "true", "90");
 * giving one in both places with different values is a 400.
 */
type Kind = 'boolean' | 'integer';
interface OptionSpec {
  kind: Kind | 'string';
  description: string;
  example: boolean | number | string;
  query?: TSchema;
  field?: TSchema;
}

const bool = (description: string, example = true): OptionSpec => ({ kind: 'boolean', description, example });

const SPECS: Record<keyof PdfExportOptions, OptionSpec> = {
  pageRanges: {
    kind: 'string',
    description: 'Pages to export, e.g. `1-3,5` (Gotenberg: nativePageRanges). Empty output when no page is in range.',
    example: '1-3,5',
    query: Type.String({ pattern: PAGE_RANGES_PATTERN, maxLength: 200 }),
  },
  landscape: bool('Turn every page to landscape (Writer and Calc documents; slides keep their size).'),
  exportComments: bool('Word/Writer comments and spreadsheet notes as PDF text annotations (Gotenberg: exportNotes).'),
  commentsInMargin: bool('Comments drawn in a margin on the right of each page: every page gets 40 % wider (180–400 pt, content not scaled), each comment a box with its author and text joined by a dotted line to its anchor; boxes stack without overlap and shrink to 6 then 5 pt, then are cut, when a page has more than fits. Also as annotations only with exportComments=true. Any format whose comments LibreOffice exports (Writer comments, spreadsheet notes, slide comments); at most 1000 comments and 2000 pages (Gotenberg: exportNotesInMargin).'),
  exportBookmarks: bool('Headings and bookmarks as the PDF outline (default true).', false),
  exportFormFields: bool('Form controls as PDF form fields (default true).', false),
  losslessImageCompression: bool('Compress images losslessly (Flate) instead of JPEG.'),
  quality: { kind: 'integer', description: 'JPEG quality of images, 1–100 (default 90).', example: 75, query: Type.Integer({ minimum: 1, maximum: 100 }), field: Type.String({ pattern: '^(100|[1-9][0-9]?)$' }) },
  reduceImageResolution: bool('Downsample images to maxImageResolution (default 300 DPI).'),
  maxImageResolution: {
    kind: 'integer',
    description: 'Resolution images are reduced to, in DPI (75, 150, 300, 600, 1200); giving it turns reduceImageResolution on.',
    example: 150,
    query: Type.Unsafe<number>({ type: 'integer', enum: [...IMAGE_RESOLUTIONS] }),
    field: StringEnum(IMAGE_RESOLUTIONS.map(String)),
  },
  pdfa: { kind: 'string', description: 'PDF/A conformance for archiving: PDF/A-1b, PDF/A-2b or PDF/A-3b (XMP identification, embedded fonts, output intent).', example: 'PDF/A-2b', query: StringEnum(PDFA_LEVELS) },
  pdfua: bool('Tagged PDF with the PDF/UA-1 identification, for accessibility.'),
  singlePageSheets: bool('Each spreadsheet sheet on one page.'),
};

const BooleanText = StringEnum(['true', 'false']);
const BooleanQuery = Type.Boolean();

/**
 * The example goes into the description, not the schema: Swagger UI pre-fills optional parameters with
 * their schema examples and sends them. Multipart forms are worse: Swagger UI sends every text field
 * with a sample value (the example, else the first enum value, else "string"). So each option's
 * multipart field also takes the empty text, which means "not given" (as an HTML form sends an empty
 * field), and lists it first: a try-it-out request asks for no option unless one is chosen.
 */
function schemaFor(spec: OptionSpec, part: 'query' | 'field'): TSchema {
  const description = `${spec.description} Example: \`${String(spec.example)}\`.`;
  if (part === 'query') return Type.Optional({ ...(spec.query ?? (spec.kind === 'boolean' ? BooleanQuery : Type.String())), description } as TSchema);
  return Type.Optional({ ...emptyAllowed(spec.field ?? spec.query ?? BooleanText), description: `${description} Empty: not given.` } as TSchema);
}

/** A multipart field schema that also takes the empty text, offered first (enums) or as the example. */
function emptyAllowed(schema: TSchema): TSchema {
  if (Array.isArray(schema.enum)) return { ...schema, type: 'string', enum: ['', ...schema.enum.map(String)] } as TSchema;
  if (typeof schema.pattern === 'string') return { ...schema, pattern: `^$|${schema.pattern}`, examples: [''] } as TSchema;
  return { ...schema, examples: [''] } as TSchema;
}

const OUTPUT_FILENAME = { description: 'Name of the file in Content-Disposition (its extension is replaced by the output format’s); default: the upload’s name. Example: `Annual report`.', maxLength: 200 };

/** Query parameter schemas, to spread into a route's querystring object. */
export const PdfOptionQuery = {
  ...Object.fromEntries(Object.entries(SPECS).map(([name, spec]) => [name, schemaFor(spec, 'query')])),
  outputFilename: Type.Optional(Type.String(OUTPUT_FILENAME)),
} as unknown as Record<keyof PdfExportOptions | 'outputFilename', TOptional<TSchema>>;

/** Multipart text field schemas, to spread into a route's multipart body object. */
export const PdfOptionFields = {
  ...Object.fromEntries(Object.entries(SPECS).map(([name, spec]) => [name, schemaFor(spec, 'field')])),
  outputFilename: Type.Optional(Type.String({ ...OUTPUT_FILENAME, description: `${OUTPUT_FILENAME.description} Empty: not given.`, examples: [''] })),
} as unknown as Record<keyof PdfExportOptions | 'outputFilename', TOptional<TSchema>>;

const NAMES = Object.keys(SPECS) as (keyof PdfExportOptions)[];

function typed(spec: OptionSpec, value: unknown): boolean | number | string {
  if (spec.kind === 'boolean') return value === true || value === 'true';
  if (spec.kind === 'integer') return Number(value);
  return String(value);
}

/** The options a request gives, from its (validated) query and multipart fields; 400 when both give one differently. */
export function pdfOptionsFrom(query: Record<string, unknown>, fields: Record<string, unknown> = {}): { pdf?: PdfExportOptions; outputFilename?: string } {
  const pdf: Record<string, boolean | number | string> = {};
  for (const name of [...NAMES, 'outputFilename'] as const) {
    const spec = name === 'outputFilename' ? ({ kind: 'string' } as OptionSpec) : SPECS[name];
    const inQuery = query[name] === undefined ? undefined : typed(spec, query[name]);
    const inField = fields[name] === undefined || fields[name] === '' ? undefined : typed(spec, fields[name]);
    if (inQuery !== undefined && inField !== undefined && inQuery !== inField) {
      throw validationError(`${name} is given twice with different values (query ${String(inQuery)}, field ${String(inField)}); give it once.`, [{ field: name, issue: 'conflicting values' }]);
    }
    const value = inQuery ?? inField;
    if (value !== undefined) pdf[name] = value;
  }
  const { outputFilename, ...options } = pdf;
  return { pdf: Object.keys(options).length > 0 ? (options as PdfExportOptions) : undefined, outputFilename: outputFilename as string | undefined };
}

/** The option names, for descriptions. */
export const PDF_OPTION_NAMES: readonly string[] = [...NAMES, 'outputFilename'];
