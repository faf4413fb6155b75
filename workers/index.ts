// Piscina tasks: every named export here is a task (see workers/dispatch.ts).
// Each engine keeps a thin adapter in workers/<engine>.ts; re-export it here.
export { ping, spin } from './ping.js';
export * from './annotate.js';
export * from './verify.js';
export * from './sign.js';
export * from './markup.js';
export * from './docx-pdf.js';
