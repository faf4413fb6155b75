/** Reads the format and pixel size of PNG, JPEG and GIF images from their headers. */
export interface ImageInfo {
  format: 'png' | 'jpeg' | 'gif';
  width: number;
  height: number;
}

function pngInfo(b: Uint8Array): ImageInfo | undefined {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.length < 24) return undefined;
  return { format: 'png', width: dv.getUint32(16), height: dv.getUint32(20) };
}

function gifInfo(b: Uint8Array): ImageInfo | undefined {
  if (b.length < 10) return undefined;
  return { format: 'gif', width: b[6] | (b[7] << 8), height: b[8] | (b[9] << 8) };
}

// Start-of-frame markers carry the size; DHT (C4), JPG (C8) and DAC (CC) share the range but do not.
const SOF_MARKERS = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpegInfo(b: Uint8Array): ImageInfo | undefined {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) {
      // Tolerate fill bytes between segments, as decoders do.
      i++;
      continue;
    }
    const marker = b[i + 1];
    if (marker === 0xff) {
      i++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    const length = (b[i + 2] << 8) | b[i + 3];
    if (length < 2) return undefined;
    if (SOF_MARKERS.has(marker)) {
      return { format: 'jpeg', height: (b[i + 5] << 8) | b[i + 6], width: (b[i + 7] << 8) | b[i + 8] };
    }
    i += 2 + length;
  }
  return undefined;
}

export function readImageInfo(bytes: Uint8Array): ImageInfo | undefined {
  const b = bytes;
  let info: ImageInfo | undefined;
  if (b.length > 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) info = pngInfo(b);
  else if (b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) info = jpegInfo(b);
  else if (b.length > 6 && b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38) info = gifInfo(b);
  if (!info || info.width <= 0 || info.height <= 0) return undefined;
  return info;
}
