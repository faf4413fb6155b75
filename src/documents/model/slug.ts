/** GitHub-style heading ids ("Hello, World!" → "hello-world"; repeats get -1, -2 …). */
export class Slugger {
  private readonly occurrences = new Map<string, number>();

  slug(text: string): string {
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    let candidate = base;
    while (this.occurrences.has(candidate)) {
      const count = this.occurrences.get(base)! + 1;
      this.occurrences.set(base, count);
      candidate = `${base}-${count}`;
    }
    this.occurrences.set(candidate, 0);
    return candidate;
  }

  /** Records an explicit id so generated slugs do not collide with it. */
  reserve(id: string): void {
    if (!this.occurrences.has(id)) this.occurrences.set(id, 0);
  }
}
