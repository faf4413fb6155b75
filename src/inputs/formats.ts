/**
 * The document formats docproc tells apart, and how LibreOffice reads each one. Detection is in
 * detect-format.ts; which route takes which format is said where the route calls it.
 */
export const DOCUMENT_FORMATS = [
  'pdf',
  // Writer
  'doc', 'dot', 'docx', 'docm', 'dotx', 'odt', 'ott', 'rtf', 'txt', 'wpd', 'pages',
  // Calc
  'xls', 'xlsx', 'xlsm', 'ods', 'csv',
  // Impress
  'ppt', 'pptx', 'odp',
  // Converted natively (Markdown and HTML → DOCX)
  'md', 'html',
] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

export type OfficeApplication = 'writer' | 'calc' | 'impress';

/** How LibreOffice opens a format: its application, import filter, and the filter's options when it needs any. */
export interface OfficeImport {
  application: OfficeApplication;
  filter: string;
  filterOptions?: string;
}

/**
 * CSV as Calc's text import reads it: comma separated, double-quoted, UTF-8 (76), from line 1;
 * text kept as text in quoted fields, numbers detected (the options are positional: see
 * LibreOffice's "Filter Options for the CSV Filter"). The separator is replaced per document.
 */
export const csvFilterOptions = (separator: number) => `${separator},34,76,1,,0,false,true,false,false,false`;

export const OFFICE_IMPORTS: Readonly<Partial<Record<DocumentFormat, OfficeImport>>> = {
  doc: { application: 'writer', filter: 'MS Word 97' },
  dot: { application: 'writer', filter: 'MS Word 97 Vorlage' },
  docx: { application: 'writer', filter: 'MS Word 2007 XML' },
  docm: { application: 'writer', filter: 'MS Word 2007 XML VBA' },
  dotx: { application: 'writer', filter: 'MS Word 2007 XML Template' },
  odt: { application: 'writer', filter: 'writer8' },
  ott: { application: 'writer', filter: 'writer8_template' },
  rtf: { application: 'writer', filter: 'Rich Text Format' },
  txt: { application: 'writer', filter: 'Text (encoded)', filterOptions: 'UTF8,LF,Liberation Mono,en-US' },
  wpd: { application: 'writer', filter: 'WordPerfect' },
  /** Apple Pages '09 and 2013+ (libetonyek); detected in iwork.ts. */
  pages: { application: 'writer', filter: 'Apple Pages' },
  xls: { application: 'calc', filter: 'MS Excel 97' },
  xlsx: { application: 'calc', filter: 'Calc MS Excel 2007 XML' },
  xlsm: { application: 'calc', filter: 'Calc MS Excel 2007 VBA XML' },
  ods: { application: 'calc', filter: 'calc8' },
  csv: { application: 'calc', filter: 'Text - txt - csv (StarCalc)', filterOptions: csvFilterOptions(44) },
  ppt: { application: 'impress', filter: 'MS PowerPoint 97' },
  pptx: { application: 'impress', filter: 'Impress MS PowerPoint 2007 XML' },
  odp: { application: 'impress', filter: 'impress8' },
};

/** LibreOffice's PDF export filter of each application. */
export const PDF_EXPORT_FILTERS: Readonly<Record<OfficeApplication, string>> = {
  writer: 'writer_pdf_Export',
  calc: 'calc_pdf_Export',
  impress: 'impress_pdf_Export',
};

/** Formats that are OOXML packages (guarded and scrubbed in Node before LibreOffice sees them). */
export const OOXML_FORMATS: ReadonlySet<DocumentFormat> = new Set(['docx', 'docm', 'dotx', 'xlsx', 'xlsm', 'pptx']);
/** Formats that are OpenDocument ZIP packages. */
export const ODF_FORMATS: ReadonlySet<DocumentFormat> = new Set(['odt', 'ott', 'ods', 'odp']);
/** Text formats: nothing in their bytes says which one they are, so `from` is trusted for them. */
export const TEXT_FORMATS: ReadonlySet<DocumentFormat> = new Set(['txt', 'csv', 'md', 'html']);

/** Every format LibreOffice renders to PDF on POST /v1/convert. */
export const OFFICE_FORMATS = Object.keys(OFFICE_IMPORTS) as DocumentFormat[];
