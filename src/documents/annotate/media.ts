import type PizZip from 'pizzip';
import { NS, REL, XML_DECLARATION } from '../ooxml/constants.js';
import { relationshipsPartOf } from '../ooxml/package.js';
import type { ImageAsset } from './images.js';

/** ZIP item name of the .rels part of the part stored as `partPath` (e.g. word/document.xml). */
const relsPathFor = (partPath: string) => relationshipsPartOf(`/${partPath}`).slice(1);

/**
 * Collects the images embedded while rendering and writes them into the package at the end:
 * one media file per distinct image, one relationship per (part, image), content-type defaults.
 * Relationship ids are fresh strings, so they never collide with the template's rIdN.
 */
export class MediaRegistry {
  private readonly mediaTargets = new Map<ImageAsset, { raster?: string; svg?: string }>();
  private readonly relsByPart = new Map<string, Map<string, string>>();
  private mediaCounter = 0;
  private drawingCounter = 0;
  private readonly drawingIdBase: number;

  constructor(private readonly zip: PizZip) {
    // docPr ids must be unique across the document; start above any the template uses.
    let highest = 0;
    for (const name of Object.keys(zip.files)) {
      if (!/^word\/.*\.xml$/.test(name)) continue;
      const xml = zip.files[name].asText();
      for (const match of xml.matchAll(/<wp:docPr[^>]*?\sid="(\d+)"/g)) highest = Math.max(highest, Number(match[1]));
    }
    this.drawingIdBase = highest + 1000;
  }

  /**
   * Relationship ids to use in `partPath` for `asset`: the raster picture and, for an SVG,
   * the vector original that goes in the blip's asvg:svgBlip extension.
   */
  embed(partPath: string, asset: ImageAsset): { rId: string; svgRId?: string } {
    const rId = this.relationship(partPath, this.target(asset, 'raster'));
    return asset.svg ? { rId, svgRId: this.relationship(partPath, this.target(asset, 'svg')) } : { rId };
  }

  private target(asset: ImageAsset, kind: 'raster' | 'svg'): string {
    let targets = this.mediaTargets.get(asset);
    if (!targets) {
      targets = {};
      this.mediaTargets.set(asset, targets);
    }
    targets[kind] ??= `media/docproc-annotate-${++this.mediaCounter}.${kind === 'svg' ? 'svg' : asset.extension}`;
    return targets[kind];
  }

  private relationship(partPath: string, target: string): string {
    let rels = this.relsByPart.get(partPath);
    if (!rels) {
      rels = new Map();
      this.relsByPart.set(partPath, rels);
    }
    let rId = rels.get(target);
    if (!rId) {
      rId = `rIdDocproc${rels.size + 1}`;
      rels.set(target, rId);
    }
    return rId;
  }

  nextDrawingId(): number {
    return this.drawingIdBase + ++this.drawingCounter;
  }

  /** Writes media, relationships and content types into the zip. */
  flush(): void {
    for (const [asset, targets] of this.mediaTargets) {
      if (targets.raster) this.zip.file(`word/${targets.raster}`, asset.bytes);
      if (targets.svg && asset.svg) this.zip.file(`word/${targets.svg}`, asset.svg);
    }
    for (const [partPath, rels] of this.relsByPart) this.addRelationships(partPath, rels);
    this.addContentTypeDefaults();
  }

  private addRelationships(partPath: string, rels: Map<string, string>): void {
    const relsPath = relsPathFor(partPath);
    const existing = this.zip.file(relsPath)?.asText()
      ?? `${XML_DECLARATION}<Relationships xmlns="${NS.relationships}"></Relationships>`;
    // Parts are in word/, so targets relative to the part are "media/…".
    const entries = [...rels].map(([target, rId]) => `<Relationship Id="${rId}" Type="${REL.image}" Target="${target}"/>`).join('');
    const updated = /<Relationships[^>]*\/>/.test(existing)
      ? existing.replace(/<Relationships([^>]*)\/>/, `<Relationships$1>${entries}</Relationships>`)
      : existing.replace('</Relationships>', `${entries}</Relationships>`);
    this.zip.file(relsPath, updated);
  }

  private addContentTypeDefaults(): void {
    const file = this.zip.file('[Content_Types].xml');
    if (!file || this.mediaTargets.size === 0) return;
    let xml = file.asText();
    const needed = new Map<string, string>();
    for (const [asset, targets] of this.mediaTargets) {
      if (targets.raster) needed.set(asset.extension, asset.contentType);
      if (targets.svg) needed.set('svg', 'image/svg+xml');
    }
    for (const [extension, contentType] of needed) {
      if (new RegExp(`<Default[^>]*Extension="${extension}"`, 'i').test(xml)) continue;
      xml = xml.replace(/<Types([^>]*)>/, `<Types$1><Default Extension="${extension}" ContentType="${contentType}"/>`);
    }
    this.zip.file('[Content_Types].xml', xml);
  }
}
