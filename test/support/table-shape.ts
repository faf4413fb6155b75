import type { Element as XmlElement, Node as XmlNode } from '@xmldom/xmldom';

/**
 * Tables as a namespace-aware DOM parser sees them, the independent count tests hold the service's
 * table budgets against: the deepest table nesting and the number of cells under `roots`, with the
 * format's own element names (`isTable`, `isCell`).
 */
export function tableShape(roots: XmlNode[], isTable: (element: XmlElement) => boolean, isCell: (element: XmlElement) => boolean): { cells: number; nesting: number } {
  let cells = 0;
  let nesting = 0;
  const walk = (node: XmlNode, depth: number) => {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType !== 1) continue;
      const element = child as XmlElement;
      const table = isTable(element);
      if (isCell(element)) cells++;
      if (table) nesting = Math.max(nesting, depth + 1);
      walk(element, depth + (table ? 1 : 0));
    }
  };
  for (const root of roots) walk(root, 0);
  return { cells, nesting };
}
