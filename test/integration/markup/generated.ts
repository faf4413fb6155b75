/**
 * Seeded generator of Markdown and HTML documents made of the structures the fidelity test
 * checks: headings, paragraphs with inline formatting and links, nested ordered and bullet lists
 * (numbering styles, items with several blocks, headings in items), tables with row and column
 * spans, definition lists, figures with captions, lazy-loaded and inline (data:) images,
 * teaser-card links wrapping blocks, code blocks and block quotes.
 */
export function rng(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike', 'november'];
/** A 2×2 GIF. */
const GIF = 'data:image/gif;base64,R0lGODlhAgACAIAAAAAAAP///yH5BAEAAAAALAAAAAACAAIAAAIChFEAOw==';
const PLACEHOLDER = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

export function generatedMarkdown(seed: number): string {
  const r = rng(seed);
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)];
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const inline = () => {
    const w = words(2 + Math.floor(r() * 5));
    switch (Math.floor(r() * 5)) {
      case 0: return `${w} **${words(2)}** ${words(1)}`;
      case 1: return `${w} *${words(1)}* and \`${words(1)}\``;
      case 2: return `${w} [${words(2)}](https://example.com/${pick(WORDS)})`;
      default: return w;
    }
  };
  const list = (depth: number, indent: string): string => {
    const ordered = r() < 0.6;
    const items = 1 + Math.floor(r() * 3);
    let out = '';
    for (let i = 0; i < items; i++) {
      const marker = ordered ? `${i + 1}.` : '-';
      const pad = indent + ' '.repeat(marker.length + 1);
      out += `${indent}${marker} ${inline()}\n`;
      if (r() < 0.3) out += `\n${pad}${inline()}\n\n`;
      if (depth < 3 && r() < 0.5) out += list(depth + 1, pad);
    }
    return out;
  };
  const blocks: string[] = [];
  for (let i = 0; i < 12; i++) {
    switch (Math.floor(r() * 7)) {
      case 0: blocks.push(`${'#'.repeat(1 + Math.floor(r() * 3))} ${words(3)}`); break;
      case 1: case 2: blocks.push(list(1, '')); break;
      case 3: blocks.push(`| ${words(1)} | ${words(1)} |\n|---|:-:|\n| ${inline()} | ${words(2)} |\n| ${words(1)} | ${words(1)} |`); break;
      case 4: blocks.push(`\`\`\`\n${words(3)}\n  ${words(2)}\n\`\`\``); break;
      case 5: blocks.push(`> ${inline()}\n>\n> ${inline()}`); break;
      default: blocks.push(`${inline()}\n${inline()}`); break;
    }
  }
  return `${blocks.join('\n\n')}\n`;
}

export function generatedHtml(seed: number): string {
  const r = rng(seed);
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)];
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const inline = () => {
    const w = words(2 + Math.floor(r() * 4));
    switch (Math.floor(r() * 4)) {
      case 0: return `${w} <strong>${words(2)}</strong>`;
      case 1: return `${w} <a href="https://example.com/${pick(WORDS)}">${words(2)}</a>`;
      case 2: return `${w} <em>${words(1)}</em> <code>${words(1)}</code>`;
      default: return w;
    }
  };
  const list = (depth: number): string => {
    const ordered = r() < 0.6;
    const type = ordered ? pick(['', ' type="a"', ' type="i"', ' style="list-style-type: upper-roman"', ' start="3"']) : '';
    let out = ordered ? `<ol${type}>` : '<ul>';
    const items = 1 + Math.floor(r() * 3);
    for (let i = 0; i < items; i++) {
      out += `<li>${inline()}`;
      if (r() < 0.3) out += `<p>${inline()}</p>`;
      if (depth < 3 && r() < 0.5) out += list(depth + 1);
      out += '</li>';
    }
    return out + (ordered ? '</ol>' : '</ul>');
  };
  const blocks: string[] = [];
  for (let i = 0; i < 12; i++) {
    switch (Math.floor(r() * 10)) {
      case 0: { const level = 1 + Math.floor(r() * 3); blocks.push(`<h${level}>${words(3)}</h${level}>`); break; }
      case 1: blocks.push(list(1)); break;
      case 2: blocks.push(`<table><thead><tr><th>${words(1)}</th><th colspan="2">${words(1)}</th></tr></thead><tbody><tr><td rowspan="2">${words(2)}</td><td>${inline()}</td><td>${words(1)}</td></tr><tr><td>${words(1)}</td><td>${words(1)}</td></tr></tbody></table>`); break;
      case 3: blocks.push(`<dl><dt>${words(1)}</dt><dd>${inline()}</dd><dt>${words(2)}</dt><dd>${words(3)}</dd></dl>`); break;
      case 4: blocks.push(`<figure><img src="${GIF}" alt="${words(1)}"><figcaption>${words(3)}</figcaption></figure>`); break;
      case 5: blocks.push(`<p>${inline()} <img src="${PLACEHOLDER}" data-src="${GIF}" alt="${words(1)}"> ${words(2)}</p>`); break;
      case 6: blocks.push(`<div><div><img alt="${words(1)}" class="lazy"></div><noscript><img src="${GIF}" alt="${words(1)}"></noscript></div>`); break;
      case 7: blocks.push(`<a href="/${pick(WORDS)}"><div>${words(3)}</div><p>${words(4)} <em>${words(1)}</em></p></a>`); break;
      case 8: blocks.push(`<pre><code>${words(3)}\n  ${words(2)}</code></pre><blockquote><p>${inline()}</p></blockquote>`); break;
      default: blocks.push(`<p>${inline()}</p>`); break;
    }
  }
  return `<!DOCTYPE html><html><head><title>${words(2)}</title></head><body>${blocks.join('\n')}</body></html>`;
}
