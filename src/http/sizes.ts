/** A byte limit as people read it in an error: "25 MB", "512 KB", "900 bytes" (binary units, one decimal at most). */
export function readableSize(bytes: number): string {
  const round = (n: number) => String(Math.round(n * 10) / 10);
  if (bytes >= 1024 * 1024) return `${round(bytes / (1024 * 1024))} MB`;
  if (bytes >= 1024) return `${round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}
