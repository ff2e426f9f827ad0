'use strict';
// Tensor messages to typed arrays.

const os = require('node:os');

const TYPES = {
  DTYPE_FLOAT32: { name: 'float32', Array: Float32Array },
  DTYPE_FLOAT64: { name: 'float64', Array: Float64Array },
  DTYPE_FLOAT16: { name: 'float16', Array: Uint16Array },
  DTYPE_BFLOAT16: { name: 'bfloat16', Array: Uint16Array },
};

/**
 * @typedef {object} Tensor
 * @property {string} dtype  'float32' | 'float64' | 'float16' | 'bfloat16'
 * @property {number[]} shape  [rows, width], or [width] for one row (width: rowWidth(spec))
 * @property {Float32Array|Float64Array|Uint16Array} data  row-major values;
 *     float16 and bfloat16 as their raw uint16 bits
 * @property {Buffer} bytes  the little-endian bytes as received
 */

/** @returns {Tensor} */
function fromProto(tensor) {
  const type = TYPES[tensor.dtype];
  if (!type) throw new Error(`posenc: unknown dtype ${tensor.dtype}`);
  const shape = tensor.shape.map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const size = type.Array.BYTES_PER_ELEMENT;
  const bytes = tensor.data;
  if (count * size !== bytes.length) {
    throw new Error(`posenc: shape [${shape}] of ${type.name} needs ` +
                    `${count * size} bytes, got ${bytes.length}`);
  }
  return { dtype: type.name, shape, data: view(bytes, type.Array, count), bytes };
}

// A view over the bytes when aligned on a little-endian host, else a copy.
function view(bytes, Array, count) {
  const size = Array.BYTES_PER_ELEMENT;
  if (os.endianness() === 'LE' && bytes.byteOffset % size === 0) {
    return new Array(bytes.buffer, bytes.byteOffset, count);
  }
  const out = new Array(count);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  for (let k = 0; k < count; k++) {
    if (size === 8) out[k] = dv.getFloat64(8 * k, true);
    else if (size === 4) out[k] = dv.getFloat32(4 * k, true);
    else out[k] = dv.getUint16(2 * k, true);
  }
  return out;
}

/** Exact float value of bfloat16 bits. */
function bfloat16ToNumber(bits) {
  const f = new Float32Array(1);
  new Uint32Array(f.buffer)[0] = bits << 16;
  return f[0];
}

/** Exact float value of IEEE binary16 bits. */
function float16ToNumber(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f;
  const frac = bits & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1024 + frac) * 2 ** (exp - 25);
}

/**
 * A float32, float16 or bfloat16 tensor's values as a Float32Array, exactly
 * (both 16-bit types fit float32): float32's `data` itself; bfloat16 bits
 * shifted into the upper half of each float32; float16 decoded. float64
 * would round, so it throws.
 */
function toFloat32Array(tensor) {
  const { dtype, data } = tensor;
  if (dtype === 'float32') return data;
  const out = new Float32Array(data.length);
  if (dtype === 'bfloat16') {
    const bits = new Uint32Array(out.buffer);
    for (let k = 0; k < data.length; k++) bits[k] = data[k] << 16;
  } else if (dtype === 'float16') {
    for (let k = 0; k < data.length; k++) out[k] = float16ToNumber(data[k]);
  } else {
    throw new TypeError(`posenc: a ${dtype} tensor does not fit float32`);
  }
  return out;
}

module.exports = { fromProto, bfloat16ToNumber, float16ToNumber, toFloat32Array };
