import { Type, type Static } from '@sinclair/typebox';

/** How tracked changes (w:ins / w:del) appear in the PDF. */
export const TrackedChangesSchema = Type.Union(
  [Type.Literal('markup'), Type.Literal('accept'), Type.Literal('reject')],
  {
    default: 'markup',
    description:
      'markup: insertions and deletions shown with change marks, one colour per author; accept: the document as if every change were accepted; reject: as if every change were rejected.',
  },
);

export type TrackedChanges = Static<typeof TrackedChangesSchema>;

/** Query-string options of DOCX→PDF conversion (the route adds from/to itself). */
export const DocxToPdfQuerySchema = Type.Object({
  trackedChanges: Type.Optional(TrackedChangesSchema),
});

export type DocxToPdfQuery = Static<typeof DocxToPdfQuerySchema>;
