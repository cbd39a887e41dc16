// A decoder of Mapbox Vector Tiles 2.1 (the protobuf schema of vector_tile.proto): layers,
// features with their geometry in tile units, and properties. Written for Basin's vector tiles
// (docs/tiles.md, "Vector tiles"); it reads any valid 2.1 tile and skips fields it does not
// know, as protobuf readers must.

const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;

const TWO_32 = 2 ** 32;
const utf8 = new TextDecoder('utf-8');

/** Geometry types of the schema. */
export const GEOMETRY_TYPES = ['Unknown', 'Point', 'LineString', 'Polygon'];

/** A protobuf reader over `bytes` from `start` to `end`. */
class Reader {
  constructor(bytes, start = 0, end = bytes.length) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = start;
    this.end = end;
  }

  more() {
    return this.pos < this.end;
  }

  /** An unsigned varint of up to 64 bits as [low 32 bits, high 32 bits]. */
  varintParts() {
    let low = 0;
    let high = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.end) throw new Error('vector tile: truncated varint');
      const byte = this.bytes[this.pos];
      this.pos += 1;
      if (shift < 28) {
        low |= (byte & 0x7f) << shift;
      } else if (shift === 28) {
        low |= (byte & 0x0f) << 28;
        high |= (byte & 0x7f) >>> 4;
      } else if (shift < 64) {
        high |= (byte & 0x7f) << (shift - 32);
      } else {
        throw new Error('vector tile: varint longer than 10 bytes');
      }
      shift += 7;
      if ((byte & 0x80) === 0) break;
    }
    return [low >>> 0, high >>> 0];
  }

  /** An unsigned varint as a Number (exact below 2^53). */
  varint() {
    const [low, high] = this.varintParts();
    return high * TWO_32 + low;
  }

  /** A two's complement int64 varint as a Number. */
  int64() {
    const [low, high] = this.varintParts();
    if (high & 0x80000000) {
      return -((~high >>> 0) * TWO_32 + (~low >>> 0) + 1);
    }
    return high * TWO_32 + low;
  }

  /** A zigzag (sint) varint as a Number. */
  sint64() {
    const [low, high] = this.varintParts();
    const magnitude = (high >>> 1) * TWO_32 + (((low >>> 1) | ((high & 1) << 31)) >>> 0);
    return low & 1 ? -magnitude - 1 : magnitude;
  }

  /** The bounds of a length-delimited field: [start, end]. */
  span() {
    const length = this.varint();
    const start = this.pos;
    const end = start + length;
    if (end > this.end) throw new Error('vector tile: a field runs past its message');
    this.pos = end;
    return [start, end];
  }

  string() {
    const [start, end] = this.span();
    return utf8.decode(this.bytes.subarray(start, end));
  }

  float() {
    const value = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return value;
  }

  double() {
    const value = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return value;
  }

  /** Packed varints (or one unpacked value) of a repeated uint32 field. */
  packed(wireType, into) {
    if (wireType === BYTES) {
      const [start, end] = this.span();
      const inner = new Reader(this.bytes, start, end);
      while (inner.more()) into.push(inner.varint());
    } else {
      into.push(this.varint());
    }
  }

  skip(wireType) {
    switch (wireType) {
      case VARINT: this.varintParts(); break;
      case FIXED64: this.pos += 8; break;
      case BYTES: this.span(); break;
      case FIXED32: this.pos += 4; break;
      default: throw new Error(`vector tile: unsupported wire type ${wireType}`);
    }
    if (this.pos > this.end) throw new Error('vector tile: truncated field');
  }

  /** Calls `field(number, wireType)` for every field; it returns true when it read it. */
  fields(field) {
    while (this.more()) {
      const key = this.varint();
      const number = Math.floor(key / 8);
      const wireType = key & 7;
      if (!field(number, wireType)) this.skip(wireType);
    }
  }
}

function readValue(reader, [start, end]) {
  const inner = new Reader(reader.bytes, start, end);
  let value = null;
  inner.fields((number, wireType) => {
    if (number === 1 && wireType === BYTES) value = inner.string();
    else if (number === 2 && wireType === FIXED32) value = inner.float();
    else if (number === 3 && wireType === FIXED64) value = inner.double();
    else if (number === 4 && wireType === VARINT) value = inner.int64();
    else if (number === 5 && wireType === VARINT) value = inner.varint();
    else if (number === 6 && wireType === VARINT) value = inner.sint64();
    else if (number === 7 && wireType === VARINT) value = inner.varint() !== 0;
    else return false;
    return true;
  });
  return value;
}

/** Decodes the geometry commands into arrays of [x, y] (one array per MoveTo). */
export function decodeGeometry(commands, type) {
  const parts = [];
  let current = null;
  let x = 0;
  let y = 0;
  let i = 0;
  while (i < commands.length) {
    const command = commands[i] & 0x7;
    const count = commands[i] >>> 3;
    i += 1;
    if (command === 1 || command === 2) {
      if (i + count * 2 > commands.length) throw new Error('vector tile: geometry runs short');
      for (let n = 0; n < count; n += 1) {
        const dx = commands[i];
        const dy = commands[i + 1];
        i += 2;
        x += (dx >>> 1) ^ -(dx & 1);
        y += (dy >>> 1) ^ -(dy & 1);
        if (command === 1 && (type !== 1 || !current)) {
          current = [];
          parts.push(current);
        } else if (!current) {
          throw new Error('vector tile: LineTo before MoveTo');
        }
        current.push([x, y]);
      }
    } else if (command === 7) {
      // ClosePath: the ring ends where it started (drawing closes it).
      if (current && current.length) current.closed = true;
    } else {
      throw new Error(`vector tile: unknown geometry command ${command}`);
    }
  }
  return parts;
}

function readFeature(reader, [start, end], keys, values) {
  const inner = new Reader(reader.bytes, start, end);
  const tags = [];
  const commands = [];
  let id = null;
  let type = 0;
  inner.fields((number, wireType) => {
    if (number === 1 && wireType === VARINT) id = inner.varint();
    else if (number === 2) inner.packed(wireType, tags);
    else if (number === 3 && wireType === VARINT) type = inner.varint();
    else if (number === 4) inner.packed(wireType, commands);
    else return false;
    return true;
  });
  return { id, type, tags, commands, keys, values };
}

/** Resolves a raw feature: type name, geometry (arrays of points), properties. */
function resolveFeature(raw) {
  const properties = {};
  for (let t = 0; t + 1 < raw.tags.length; t += 2) {
    const key = raw.keys[raw.tags[t]];
    if (key === undefined) continue;
    const value = raw.values[raw.tags[t + 1]];
    properties[key] = value === undefined ? null : value;
  }
  return {
    id: raw.id,
    type: GEOMETRY_TYPES[raw.type] || 'Unknown',
    geometry: decodeGeometry(raw.commands, raw.type),
    properties,
  };
}

function readLayer(reader, [start, end]) {
  const inner = new Reader(reader.bytes, start, end);
  const layer = { name: '', version: 1, extent: 4096, features: [] };
  const keys = [];
  const values = [];
  const spans = [];
  inner.fields((number, wireType) => {
    if (number === 15 && wireType === VARINT) layer.version = inner.varint();
    else if (number === 1 && wireType === BYTES) layer.name = inner.string();
    else if (number === 2 && wireType === BYTES) spans.push(inner.span());
    else if (number === 3 && wireType === BYTES) keys.push(inner.string());
    else if (number === 4 && wireType === BYTES) values.push(readValue(inner, inner.span()));
    else if (number === 5 && wireType === VARINT) layer.extent = inner.varint() || 4096;
    else return false;
    return true;
  });
  // Keys and values may follow the features in the message, so features are resolved last.
  layer.features = spans.map((span) => resolveFeature(readFeature(inner, span, keys, values)));
  return layer;
}

/**
 * Decodes a vector tile (ArrayBuffer or Uint8Array) into
 * `[{name, version, extent, features: [{id, type, geometry, properties}]}]`, where `type` is
 * 'Point', 'LineString' or 'Polygon' and `geometry` an array of parts (points, lines or
 * rings, each an array of [x, y] in tile units, y down). An empty tile has no layers.
 */
export function decodeTile(data) {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  const reader = new Reader(bytes);
  const layers = [];
  reader.fields((number, wireType) => {
    if (number !== 3 || wireType !== BYTES) return false;
    layers.push(readLayer(reader, reader.span()));
    return true;
  });
  return layers;
}

/** Signed area of a ring by the surveyor's formula in tile units (positive: an exterior
 *  ring in MVT 2.1, clockwise on screen). */
export function ringArea(ring) {
  let sum = 0;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i, i += 1) {
    sum += (ring[j][0] * ring[i][1]) - (ring[i][0] * ring[j][1]);
  }
  return sum / 2;
}
