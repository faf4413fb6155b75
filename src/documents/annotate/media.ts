import { REL } from '../ooxml/constants.js';
import type { OpcPackage } from '../ooxml/package.js';
import type { ImageAsset } from './images.js';

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

  constructor(private readonly pkg: OpcPackage) {
    // docPr ids must be unique across the document; start above any the template uses.
    let highest = 0;
    for (const name of pkg.partNames()) {
      if (!/^\/word\/.*\.xml$/.test(name)) continue;
      const xml = pkg.text(name);
      for (const match of xml.matchAll(/<wp:docPr[^<>]*?\sid="(\d+)"/g)) highest = Math.max(highest, Number(match[1]));
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

  /** Writes media, relationships and content types into the package. */
  flush(): void {
    const types = new Map<string, string>();
    for (const [asset, targets] of this.mediaTargets) {
      if (targets.raster) {
        this.pkg.setBytes(`/word/${targets.raster}`, asset.bytes);
        types.set(asset.extension, asset.contentType);
      }
      if (targets.svg && asset.svg) {
        this.pkg.setBytes(`/word/${targets.svg}`, asset.svg);
        types.set('svg', 'image/svg+xml');
      }
    }
    // Parts are in word/, so targets relative to the part are "media/…".
    for (const [partPath, rels] of this.relsByPart) {
      for (const [target, id] of rels) this.pkg.addRelationship(`/${partPath}`, { id, type: REL.image, target });
    }
    if (types.size) this.pkg.declareContentTypes(Object.fromEntries(types), {});
  }
}
