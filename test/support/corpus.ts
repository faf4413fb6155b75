import path from 'node:path';

/**
 * The shared test corpus: ../shared/corpus beside the project (as on the developers' machines
 * and in CI's fresh clone), or CORPUS_DIR when it lives elsewhere.
 */
export const CORPUS_DIR = process.env.CORPUS_DIR ?? path.resolve(import.meta.dirname, '../../../shared/corpus');
