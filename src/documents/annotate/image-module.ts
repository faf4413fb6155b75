import type Docxtemplater from 'docxtemplater';
import { cellWidthTwips } from './drawing.js';
import { loadImage } from './images.js';
import type { MediaRegistry } from './media.js';
import { PreparedVisual, visualRuns } from './visuals.js';

export const IMAGE_MODULE_NAME = 'docproc-image';

type Part = Docxtemplater.DXT.Part & {
  subparsed?: Part[];
  docprocRunProps?: string;
  docprocCellWidth?: number | null;
};

interface WalkState {
  runXml: string | null;
  cells: Array<{ xml: string; width: number | null; resolved: boolean }>;
}

/**
 * Remembers, for every `{%tag}`, the run properties of its run and the width of its table cell,
 * walking nested loop parts too, so render() can keep the run's formatting and size the image.
 */
/**
 * The run's first `<w:rPr>…</w:rPr>` (to its first closing) or `<w:rPr/>`, whichever starts first, as
 * a lazy regex would find it, in one scan: an opening without a closing cannot be re-scanned per opening.
 */
function firstRunProperties(runXml: string): string {
  const empty = '<w:rPr/>';
  const open = '<w:rPr>';
  const close = '</w:rPr>';
  const start = runXml.indexOf(open);
  const emptyAt = runXml.indexOf(empty);
  if (start >= 0 && (emptyAt < 0 || start < emptyAt)) {
    const end = runXml.indexOf(close, start + open.length);
    if (end >= 0) return runXml.slice(start, end + close.length);
  }
  return emptyAt >= 0 ? empty : '';
}

function annotatePlaceholders(parts: Part[], state: WalkState): void {
  for (const part of parts) {
    if (part.type === 'tag' && part.tag === 'w:r') {
      state.runXml = part.position === 'start' ? part.value : null;
    } else if (state.runXml !== null && typeof part.value === 'string') {
      state.runXml += part.value;
    }
    if (part.type === 'tag' && part.tag === 'w:tc') {
      if (part.position === 'start') state.cells.push({ xml: '', width: null, resolved: false });
      else if (part.position === 'end') state.cells.pop();
    } else {
      const cell = state.cells[state.cells.length - 1];
      if (cell && !cell.resolved && typeof part.value === 'string') {
        cell.xml += part.value;
        if (/<\/w:tcPr>|<w:p[\s>]/.test(cell.xml)) {
          cell.width = cellWidthTwips(cell.xml);
          cell.resolved = true;
        }
      }
    }
    if (part.type === 'placeholder' && part.module === IMAGE_MODULE_NAME) {
      part.docprocRunProps = firstRunProperties(state.runXml ?? '');
      const cell = [...state.cells].reverse().find((c) => c.width !== null);
      part.docprocCellWidth = cell?.width ?? null;
    }
    if (part.subparsed) annotatePlaceholders(part.subparsed, state);
  }
}

export interface ImageModuleContext {
  media: MediaRegistry;
  pageTextWidthTwips: number;
  images: Record<string, Buffer | Uint8Array>;
  missing: Set<string>;
}

/**
 * Our own `{%name}` module (docxtemplater's image module is commercial): the value is a
 * PreparedVisual (image or signature field) or, from free-form `data`, an image string.
 * Images stay inside the current run; signature blocks close the run, add their runs and
 * reopen a run with the original formatting.
 */
export function createImageModule(context: ImageModuleContext): Docxtemplater.DXT.Module {
  return {
    name: 'DocprocImageModule',
    matchers() {
      return [['%', IMAGE_MODULE_NAME, {}]];
    },
    postparse(postparsed: Part[]) {
      annotatePlaceholders(postparsed, { runXml: null, cells: [] });
      return postparsed;
    },
    render(part: Part, options: Docxtemplater.DXT.RenderOptions): Docxtemplater.DXT.Rendered | null {
      if (part.module !== IMAGE_MODULE_NAME) return null;
      let value: unknown;
      try {
        value = options.scopeManager.getValue(part.value, { part });
      } catch (error) {
        return { value: '', errors: [error] };
      }
      if (typeof value === 'string' && value.trim() !== '') {
        value = new PreparedVisual('image', `data.${part.value}`, {}, loadImage(value, context.images, `data.${part.value}`), '');
      }
      if (!(value instanceof PreparedVisual)) {
        context.missing.add(part.value);
        return { value: '', errors: [] };
      }
      const placement = {
        partPath: options.filePath || 'word/document.xml',
        media: context.media,
        maxWidthTwips: part.docprocCellWidth ?? context.pageTextWidthTwips,
        runProps: part.docprocRunProps ?? '',
      };
      const runs = visualRuns(value, placement);
      return { value: `</w:t></w:r>${runs}<w:r>${placement.runProps}<w:t xml:space="preserve">`, errors: [] };
    },
  };
}
