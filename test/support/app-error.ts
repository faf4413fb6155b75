import { AppError } from '../../src/errors/app-error.js';

/** The AppError `fn` throws (any other error is rethrown; no error fails the test). */
export function rejection(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected an AppError');
}
