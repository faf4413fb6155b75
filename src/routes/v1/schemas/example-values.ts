/**
 * The values the OpenAPI request examples are made of. This file imports nothing, so the schema
 * files take their multipart part examples from here while examples.ts types the JSON bodies with
 * those schemas (the two used to import each other).
 *
 * EXAMPLE_DOCX is a three-part DOCX written for this purpose (Content_Types, .rels,
 * word/document.xml) whose body reads "Dear {name}," / "Your order {order} is confirmed.".
 * EXAMPLE_PDF is a one-page A4 PDF made with pdf-lib ("Agreement to be signed." in Helvetica).
 * Both are kept as literals, not generated, so the committed OpenAPI document never drifts
 * with the zlib or pdf-lib version.
 */
export const EXAMPLE_DOCX_BASE64 =
  'UEsDBBQAAAAIAAAAIVjJTxqw6wAAAK4BAAATAAAAW0NvbnRlbnRfVHlwZXNdLnhtbH1QvU7DMBDeeQrLK4odGBBCSTrwMwJDeYCTfUks7LPlc0v79jht6YAK4933q69b7YIXW8zsIvXyRrVSIJloHU29/Fi/NPdScAGy4CNhL/fIcjVcdet9QhZVTNzLuZT0oDWbGQOwigmpImPMAUo986QTmE+YUN+27Z02kQpSacriIYfuCUfY+CKed/V9LJLRsxSPR+KS1UtIyTsDpeJ6S/ZXSnNKUFV54PDsEl9XgtQXExbk74CT7q0uk51F8Q65vEKoLP0Vs9U2mk2oSvW/zYWecRydwbN+cUs5GmSukwevzkgARz/99WHu4RtQSwMEFAAAAAgAAAAhWLmBRHGwAAAAKgEAAAsAAABfcmVscy8ucmVsc43POw7CMAwG4J1TRN5pWgaEUJMuCKkrKgeIEjeNaB5KwqO3JwMDIAZG278/y233sDO5YUzGOwZNVQNBJ70yTjM4D8f1DkjKwikxe4cMFkzQ8VV7wlnkspMmExIpiEsMppzDntIkJ7QiVT6gK5PRRytyKaOmQciL0Eg3db2l8d0A/mGSXjGIvWqADEvAf2w/jkbiwcurRZd/nPhKFFlEjZnB3UdF1atdFRYob+nHi/wJUEsDBBQAAAAIAAAAIVhyogTlHAEAAOYBAAARAAAAd29yZC9kb2N1bWVudC54bWyNkU1PwzAMhu/8iihnWFKYRqnW7oK4ISEBB45Z6n5ITRwl6cpA++84Rag7cNjF9htbj98k292nGdgBfOjRljxbSc7Aaqx725b8/e3pJucsRGVrNaCFkh8h8F11tZ2KGvVowEZGBBuKqeRdjK4QIugOjAordGCp16A3KpL0rZjQ186jhhBogRnErZQbYVRveUXIPdbHlF0KPoWZXgSnNO12HgL4A/DqEZRn31YZOF1vBY1VKfo5uosIHzh6Rm6AOHM6sT4wjbbpvYF69S81gI4vM9W1r19sSpfOsge54VR3VG/yu5yL34FnskgMdHS+Xss04vu2i4vcY4xoFj1Ac9btQJGtkt/LPMkGMZ7JdoyzlGmdWKyJv1cUyw9VP1BLAQIUAxQAAAAIAAAAIVjJTxqw6wAAAK4BAAATAAAAAAAAAAAAAACAAQAAAABbQ29udGVudF9UeXBlc10ueG1sUEsBAhQDFAAAAAgAAAAhWLmBRHGwAAAAKgEAAAsAAAAAAAAAAAAAAIABHAEAAF9yZWxzLy5yZWxzUEsBAhQDFAAAAAgAAAAhWHKiBOUcAQAA5gEAABEAAAAAAAAAAAAAAIAB9QEAAHdvcmQvZG9jdW1lbnQueG1sUEsFBgAAAAADAAMAuQAAAEADAAAAAA==';

export const EXAMPLE_PDF_BASE64 =
  'JVBERi0xLjcKJYGBgYEKCjEgMCBvYmoKPDwKL1R5cGUgL1BhZ2VzCi9LaWRzIFsgMyAwIFIgXQovQ291bnQgMQo+PgplbmRvYmoKCjIgMCBvYmoKPDwKL1R5cGUgL0NhdGFsb2cKL1BhZ2VzIDEgMCBSCj4+CmVuZG9iagoKMyAwIG9iago8PAovVHlwZSAvUGFnZQovUGFyZW50IDEgMCBSCi9SZXNvdXJjZXMgPDwKL0ZvbnQgPDwKL0hlbHZldGljYS03MDk4NDgwNzg5IDQgMCBSCj4+Ci9YT2JqZWN0IDw8Cj4+Ci9FeHRHU3RhdGUgPDwKPj4KPj4KL01lZGlhQm94IFsgMCAwIDU5NSA4NDIgXQovQW5ub3RzIFsgXQovQ29udGVudHMgWyA1IDAgUiBdCj4+CmVuZG9iagoKNCAwIG9iago8PAovVHlwZSAvRm9udAovU3VidHlwZSAvVHlwZTEKL0Jhc2VGb250IC9IZWx2ZXRpY2EKL0VuY29kaW5nIC9XaW5BbnNpRW5jb2RpbmcKPj4KZW5kb2JqCgo1IDAgb2JqCjw8Ci9GaWx0ZXIgL0ZsYXRlRGVjb2RlCi9MZW5ndGggMTE1Cj4+CnN0cmVhbQp4nB2KQQpCQQxD9zlF14LY6a/tDIgL+SMu3Ai9gMhXFF0o4vmt8kgISZ7YBJh+vC5Y7Kb7Z3pfT8e5c6ta2WujohRnSPoe5X8t5EJuTPHASou5iy2TMdVdhV1tK2zZZh6smVvPTaWvKW6IGXrggC8XthuZCmVuZHN0cmVhbQplbmRvYmoKCnhyZWYKMCA2CjAwMDAwMDAwMDAgNjU1MzUgZiAKMDAwMDAwMDAxNiAwMDAwMCBuIAowMDAwMDAwMDc2IDAwMDAwIG4gCjAwMDAwMDAxMjYgMDAwMDAgbiAKMDAwMDAwMDMyMSAwMDAwMCBuIAowMDAwMDAwNDE5IDAwMDAwIG4gCgp0cmFpbGVyCjw8Ci9TaXplIDYKL1Jvb3QgMiAwIFIKPj4KCnN0YXJ0eHJlZgo2MDcKJSVFT0Y=';

export const exampleFields = [
  { id: 'name', type: 'text' as const, value: 'Ada Lovelace' },
  { id: 'order', type: 'text' as const, value: 'A-1042' },
];

export const exampleSigner = { email: 'ada@example.com', name: 'Ada Lovelace', ip: '203.0.113.7' };

export const exampleAuditTrail = [
  { type: 'ready', timestamp: '2025-05-01T10:00:00Z' },
  { type: 'field_change', timestamp: '2025-05-01T10:01:30Z', data: { field: 'name', value: 'Ada Lovelace' } },
  { type: 'submit', timestamp: '2025-05-01T10:02:00Z' },
];

/** Multipart text parts are JSON strings; these pre-fill the form fields in Swagger UI. */
export const annotateFieldsPartExample = JSON.stringify(exampleFields);
export const signSignerPartExample = JSON.stringify(exampleSigner);
export const signAuditTrailPartExample = JSON.stringify(exampleAuditTrail);
export const annotateDataPartExample = JSON.stringify({ company: 'Analytical Engines Ltd' });
/**
 * Every optional multipart text part needs a valid example too: Swagger UI pre-fills a text
 * part without one with the word "string" and sends it, which is not JSON and not a passphrase.
 */
export const signOptionalPartExamples = {
  eventId: 'order-A-1042',
  metadata: JSON.stringify({ orderId: 'A-1042' }),
  certificate: JSON.stringify({ enabled: true }),
  passphrase: '',
  reason: 'I agree to the terms',
  location: 'London',
  contactInfo: 'ada@example.com',
  appearance: JSON.stringify({ page: 1, x: 72, y: 640, width: 220, height: 60 }),
};
