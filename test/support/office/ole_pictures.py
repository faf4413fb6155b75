"""Independent view of the raster pictures of a legacy Office file, for the picture differential:
python3-olefile (Debian) reads every root stream, and each PNG (by its signature and IHDR) and JPEG
(by SOI and its markers up to the first start-of-frame) found anywhere in them is listed as
[width, height]. Prints {path: [[w, h], ...]} as JSON."""
import json
import struct
import sys

import olefile

PNG = b"\x89PNG\r\n\x1a\n"


def jpeg_size(data, at):
    at += 2
    while at + 9 <= len(data) and data[at] == 0xFF:
        marker = data[at + 1]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return [width, height]
        if marker in (0xD9, 0xDA):
            return None
        at += 2 + struct.unpack(">H", data[at + 2:at + 4])[0]
    return None


result = {}
for path in sys.argv[1:]:
    sizes = []
    with olefile.OleFileIO(path) as ole:
        for entry in ole.listdir(streams=True, storages=False):
            data = ole.openstream(entry).read()
            at = data.find(PNG)
            while at != -1:
                if data[at + 12:at + 16] == b"IHDR":
                    sizes.append(list(struct.unpack(">II", data[at + 16:at + 24])))
                at = data.find(PNG, at + 8)
            at = data.find(b"\xff\xd8\xff")
            while at != -1:
                size = jpeg_size(data, at)
                if size:
                    sizes.append(size)
                at = data.find(b"\xff\xd8\xff", at + 3)
    result[path] = sorted(sizes)
json.dump(result, sys.stdout)
