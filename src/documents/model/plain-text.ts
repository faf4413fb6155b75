/** Concatenated text of a unist subtree (mdast `value`s), without recursion. */
interface TextNode {
  type: string;
  value?: unknown;
  alt?: unknown;
  children?: TextNode[];
}

export function plainText(root: TextNode): string {
  let text = '';
  const stack: TextNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (typeof node.value === 'string' && node.type !== 'html' && node.type !== 'comment') text += node.value;
    else if (node.type === 'image' && typeof node.alt === 'string') text += node.alt;
    if (node.children) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
  }
  return text;
}
