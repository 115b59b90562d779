import { inflateSync } from "node:zlib";

/** An 8-bit RGB or RGBA PNG (what matplotlib writes), decoded to its pixels. */
export function decodePng(png: Buffer): { width: number; height: number; pixel: (x: number, y: number) => [number, number, number] } {
  if (!png.subarray(0, 8).equals(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]))) throw new Error("not a PNG");
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString("ascii", offset + 4, offset + 8);
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      if (body[8] !== 8 || body[12] !== 0) throw new Error("only 8-bit, non-interlaced PNGs");
      channels = body[9] === 6 ? 4 : body[9] === 2 ? 3 : 0;
      if (!channels) throw new Error("only RGB or RGBA PNGs");
    }
    if (type === "IDAT") data.push(body);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    for (let x = 0; x < stride; x++) {
      const value = raw[y * (stride + 1) + 1 + x]!;
      const left = x >= channels ? pixels[y * stride + x - channels]! : 0;
      const up = y > 0 ? pixels[(y - 1) * stride + x]! : 0;
      const upLeft = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels]! : 0;
      const paeth = () => {
        const p = left + up - upLeft;
        const [a, b, c] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
        return a <= b && a <= c ? left : b <= c ? up : upLeft;
      };
      const predictor = [0, left, up, (left + up) >> 1, filter === 4 ? paeth() : 0][filter] ?? 0;
      pixels[y * stride + x] = (value + predictor) & 0xff;
    }
  }
  return {
    width,
    height,
    pixel: (x, y) => [pixels[y * stride + x * channels]!, pixels[y * stride + x * channels + 1]!, pixels[y * stride + x * channels + 2]!],
  };
}

/** The bars of a chart drawn in one colour, left to right: each bar's height in pixels. */
export function barHeights(png: Buffer, colour: [number, number, number]): number[] {
  const image = decodePng(png);
  const near = (x: number, y: number) => image.pixel(x, y).every((v, i) => Math.abs(v - colour[i]!) <= 8);
  const columns = Array.from({ length: image.width }, (_, x) => {
    let count = 0;
    for (let y = 0; y < image.height; y++) if (near(x, y)) count++;
    return count;
  });
  const bars: number[] = [];
  let current = 0;
  for (const count of [...columns, 0]) {
    if (count > 0) current = Math.max(current, count);
    else if (current > 0) {
      bars.push(current);
      current = 0;
    }
  }
  return bars;
}
