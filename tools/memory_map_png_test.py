#!/usr/bin/env python3
"""Renders tile_opt's memory map of a 256-byte kernel to PNG (rsvg-convert, as a browser would
draw it) and probes the pixels: every tile is drawn at a readable height in its own colour, the
legend and the peak line are visible, and the capacity, far above, is off the scale.

    memory_map_png_test.py TILE_OPT KERNEL.tile

The SVG says where each rectangle is; the PNG says what was drawn there, so a rectangle hidden
behind another, drawn in another colour or squeezed to a sliver fails.
"""

import os
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

SVG = "{http://www.w3.org/2000/svg}"
BUFFER = (0x9E, 0xCA, 0xE1)
PEAK_BUFFER = (0xFD, 0xAE, 0x6B)
PEAK_LINE = (0xE6, 0x55, 0x0D)


def read_png(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def near(pixel, colour, tolerance=12):
    return all(abs(p - c) <= tolerance for p, c in zip(pixel, colour))


def main():
    tile_opt, kernel = sys.argv[1], sys.argv[2]
    failures = []

    def check(name, ok, detail=""):
        print("%s %s %s" % ("ok  " if ok else "FAIL", name, detail))
        if not ok:
            failures.append(name)

    with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as tmp:
        subprocess.run([tile_opt, "--pipeline=default", "--backend=ascend910b",
                        "--emit=memory-map", "-o", tmp, kernel], check=True)
        svg_path = os.path.join(tmp, "small.svg")
        png_path = os.path.join(tmp, "small.png")
        subprocess.run(["rsvg-convert", svg_path, "-o", png_path], check=True)
        root = ET.parse(svg_path).getroot()
        width, height, px = read_png(png_path)
    check("png size", (width, height) == (int(root.get("width")), int(root.get("height"))),
          "%dx%d" % (width, height))

    rects = [r for r in root.iter(SVG + "rect") if "buffer" in (r.get("class") or "")]
    check("two tiles", len(rects) == 2, str(len(rects)))
    for r in rects:
        x, y, w, h = (float(r.get(k)) for k in ("x", "y", "width", "height"))
        title = r.find(SVG + "title").text
        check("readable height: " + title, h >= 40, "%.1f px" % h)
        colour = PEAK_BUFFER if "peak-buffer" in r.get("class") else BUFFER
        # Probe away from the label, which sits at the rectangle's top left.
        probe = px[int(y + 0.75 * h)][int(x + 0.75 * w)]
        check("drawn in its colour: " + title, near(probe, colour), str(probe))

    legend = [g for g in root.iter(SVG + "g") if g.get("class") == "legend"]
    check("legend", len(legend) == 1)
    if legend:
        swatch = legend[0].find(SVG + "rect")
        sx, sy = float(swatch.get("x")) + 7, float(swatch.get("y")) + 5
        check("legend swatch drawn", near(px[int(sy)][int(sx)], BUFFER), str(px[int(sy)][int(sx)]))
        texts = [t.text for t in legend[0].iter(SVG + "text")]
        check("legend names the peak and the capacity", "peak" in texts and "capacity" in texts,
              str(texts))

    peak = [l for l in root.iter(SVG + "line") if l.get("class") == "peak"]
    check("one peak line", len(peak) == 1)
    if peak:
        lx = float(peak[0].get("x1"))
        ly = (float(peak[0].get("y1")) * 3 + float(peak[0].get("y2"))) / 4
        column = [px[int(ly)][int(lx) + d] for d in (-1, 0, 1)]
        check("peak line drawn", any(near(p, PEAK_LINE, 40) for p in column), str(column))
    labels = [t.text for t in root.iter(SVG + "text") if t.get("class") == "peak-label"]
    check("peak labelled with bytes and statement",
          len(labels) == 1 and labels[0].startswith("peak 256 bytes at statement"), str(labels))
    axes = [t.text for t in root.iter(SVG + "text") if t.get("class") == "axis"]
    check("statement and address axes", axes == ["statement", "address (bytes)"], str(axes))
    capacity = [g for g in root.iter(SVG + "g") if g.get("class") == "capacity"]
    check("capacity marked off the scale", len(capacity) == 1)

    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
