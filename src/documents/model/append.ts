/** Appends without spreading into arguments (spreading 100 000+ items overflows the stack). */
export function append<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}
