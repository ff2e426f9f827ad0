'use strict';
// TableSpec objects (camelCase, friendly names) to request messages.

const DTYPES = {
  float32: 'DTYPE_FLOAT32', float64: 'DTYPE_FLOAT64',
  float16: 'DTYPE_FLOAT16', bfloat16: 'DTYPE_BFLOAT16',
};
const LAYOUTS = {
  interleaved: 'LAYOUT_INTERLEAVED',
  concat_sin_cos: 'LAYOUT_CONCAT_SIN_COS',
  concat_cos_sin: 'LAYOUT_CONCAT_COS_SIN',
  rotate_half: 'LAYOUT_ROTATE_HALF',
  interleaved_pairs: 'LAYOUT_INTERLEAVED_PAIRS',
};
const FREQUENCIES = { paper: 'FREQUENCY_PAPER', t2t: 'FREQUENCY_T2T' };
const ROPE_TYPES = {
  default: 'ROPE_TYPE_DEFAULT', linear: 'ROPE_TYPE_LINEAR',
  dynamic: 'ROPE_TYPE_DYNAMIC', yarn: 'ROPE_TYPE_YARN',
  llama3: 'ROPE_TYPE_LLAMA3', longrope: 'ROPE_TYPE_LONGROPE',
};
// RopeScaling's fields after `type`, in field-number order (camelCase as
// proto-loader names them), their routing-key names and kinds.
const ROPE_FIELDS = [
  ['factor', 'factor', 'double'],
  ['originalMaxPositionEmbeddings', 'original_max_position_embeddings', 'int'],
  ['seqLen', 'seq_len', 'int'],
  ['betaFast', 'beta_fast', 'double'],
  ['betaSlow', 'beta_slow', 'double'],
  ['mscale', 'mscale', 'double'],
  ['mscaleAllDim', 'mscale_all_dim', 'double'],
  ['truncate', 'truncate', 'bool'],
  ['attentionFactor', 'attention_factor', 'double'],
  ['lowFreqFactor', 'low_freq_factor', 'double'],
  ['highFreqFactor', 'high_freq_factor', 'double'],
  ['shortFactor', 'short_factor', 'list'],
  ['longFactor', 'long_factor', 'list'],
];

function lookup(table, field, value) {
  const name = table[value];
  if (name === undefined) {
    throw new TypeError(
      `${field} must be one of ${Object.keys(table).join(', ')}, got ${value}`);
  }
  return name;
}

/**
 * @typedef {object} TableSpec
 * @property {number} d            channels per row (even)
 * @property {number} maxLen       rows 0..maxLen-1
 * @property {number} [base]       wavelength base; 0 or unset = 10000
 * @property {string} [dtype]      float32 (default) | float64 | float16 | bfloat16
 * @property {string} [layout]     interleaved (default) | concat_sin_cos |
 *   concat_cos_sin | rotate_half | interleaved_pairs (the RoPE layouts: rows
 *   [cos | sin] of 2 * d_rot channels)
 * @property {string} [frequency]  paper (default) | t2t
 * @property {RopeScaling} [rope]  RoPE scaling; unset = plain sinusoid
 * @property {number} [partialRotaryFactor]  0 or unset = 1; d_rot =
 *   floor(d * partialRotaryFactor)
 */

/**
 * RoPE scaling, HF `rope_scaling` fields in camelCase. Unset (or 0 / [])
 * fields are not sent; see posenc.proto, message RopeScaling.
 * @typedef {object} RopeScaling
 * @property {string} [type]  default | linear | dynamic | yarn | llama3 | longrope
 * @property {number} [factor]
 * @property {number} [originalMaxPositionEmbeddings]
 * @property {number} [seqLen]
 * @property {number} [betaFast]
 * @property {number} [betaSlow]
 * @property {number} [mscale]
 * @property {number} [mscaleAllDim]
 * @property {boolean} [truncate]  unset = true
 * @property {number} [attentionFactor]
 * @property {number} [lowFreqFactor]
 * @property {number} [highFreqFactor]
 * @property {number[]} [shortFactor]
 * @property {number[]} [longFactor]
 */

/** @param {RopeScaling} rope */
function ropeToProto(rope) {
  const proto = {
    type: rope.type === undefined ? 'ROPE_TYPE_UNSPECIFIED' :
      lookup(ROPE_TYPES, 'rope.type', rope.type),
  };
  for (const [field, , kind] of ROPE_FIELDS) {
    const value = rope[field];
    if (value === undefined || value === null) continue;
    if (kind === 'bool') {
      if (typeof value !== 'boolean') {
        throw new TypeError(`rope.truncate must be a boolean, got ${value}`);
      }
      proto[field] = value;
    } else if (kind === 'list') {
      proto[field] = Array.from(value, Number);
    } else {
      proto[field] = value;
    }
  }
  return proto;
}

/** @param {TableSpec} spec */
function specToProto(spec) {
  const proto = {
    d: spec.d,
    base: spec.base ?? 0,
    maxLen: spec.maxLen,
    dtype: lookup(DTYPES, 'dtype', spec.dtype ?? 'float32'),
    layout: lookup(LAYOUTS, 'layout', spec.layout ?? 'interleaved'),
    frequency: lookup(FREQUENCIES, 'frequency', spec.frequency ?? 'paper'),
  };
  if (spec.partialRotaryFactor !== undefined && spec.partialRotaryFactor !== null) {
    proto.partialRotaryFactor = spec.partialRotaryFactor;
  }
  if (spec.rope !== undefined && spec.rope !== null) {
    proto.rope = ropeToProto(spec.rope);
  }
  return proto;
}

/**
 * Channels per row the server returns for a valid spec: d, or
 * floor(d * partialRotaryFactor) when that is set, twice that for the RoPE
 * layouts.
 * @param {TableSpec} spec
 */
function rowWidth(spec) {
  let width = spec.partialRotaryFactor ?
    Math.floor(spec.d * spec.partialRotaryFactor) : spec.d;
  if (spec.layout === 'rotate_half' || spec.layout === 'interleaved_pairs') {
    width *= 2;
  }
  return width;
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK64 = 0xffffffffffffffffn;

/**
 * 16 lowercase hex digits of the FNV-1a 64-bit hash of the values'
 * little-endian float64 bytes (the routing key's short_factor, long_factor).
 * @param {Iterable<number>} values
 */
function fnv1a64Hex(values) {
  const list = Array.from(values, Number);
  const bytes = new Uint8Array(8 * list.length);
  const view = new DataView(bytes.buffer);
  list.forEach((v, i) => view.setFloat64(8 * i, v, true));
  let h = FNV_OFFSET;
  for (const byte of bytes) {
    h = ((h ^ BigInt(byte)) * FNV_PRIME) & MASK64;
  }
  return h.toString(16).padStart(16, '0');
}

// The metadata key of a table call's routing key.
const ROUTING_KEY_HEADER = 'x-posenc-table';

function enumKeyName(value, prefix, unset) {
  if (value === undefined || value === 0 || value === `${prefix}UNSPECIFIED`) {
    return unset;
  }
  if (typeof value === 'string' && value.startsWith(prefix)) {
    return value.slice(prefix.length).toLowerCase();
  }
  return String(value);
}

/**
 * The routing key every table call sends as x-posenc-table metadata:
 * d=<d>;base=<base>;dtype=<dtype>;layout=<layout>;freq=<frequency>. Every
 * field but maxLen, defaults resolved (base 0 -> 10000), base written by
 * String(x) (ECMAScript Number::toString, the format every client uses).
 * @param {object} proto a TableSpec message as specToProto returns it
 */
function routingKeyOfProto(proto) {
  const base = proto.base ? proto.base : 10000;
  // A partialRotaryFactor in (0, 1] is the same table as d = the rotary
  // dimension without it (the server resolves it so): fold it into d.
  const prf = proto.partialRotaryFactor;
  const foldPrf = typeof prf === 'number' && prf > 0 && prf <= 1;
  const d = foldPrf ? Math.floor((proto.d ?? 0) * prf) : (proto.d ?? 0);
  let key = `d=${d};base=${String(base)}` +
    `;dtype=${enumKeyName(proto.dtype, 'DTYPE_', 'float32')}` +
    `;layout=${enumKeyName(proto.layout, 'LAYOUT_', 'interleaved')}` +
    `;freq=${enumKeyName(proto.frequency, 'FREQUENCY_', 'paper')}`;
  // Out of range (the server rejects it); NaN is non-zero.
  if (prf !== undefined && prf !== null && prf !== 0 && !foldPrf) {
    key += `;prf=${String(prf)}`;
  }
  if (proto.rope) key += ropeKeySuffix(proto.rope);
  return key;
}

// ";rope=<type>" and each non-zero field of a RopeScaling message, or ""
// when none is set (posenc.proto, Routing key).
function ropeKeySuffix(rope) {
  let parts = '';
  for (const [field, name, kind] of ROPE_FIELDS) {
    const value = rope[field];
    if (value === undefined || value === null) continue;
    if (kind === 'bool') {
      parts += `;${name}=${value ? 'true' : 'false'}`;
    } else if (kind === 'list') {
      if (value.length) parts += `;${name}=${fnv1a64Hex(value)}`;
    } else if (value !== 0) {  // NaN is non-zero; -0 is zero
      parts += `;${name}=${String(value)}`;
    }
  }
  const type = rope.type;
  const unset = type === undefined || type === 0 ||
    type === 'ROPE_TYPE_UNSPECIFIED';
  if (unset && !parts) return '';
  return `;rope=${enumKeyName(type, 'ROPE_TYPE_', 'default')}${parts}`;
}

/** @param {TableSpec} spec */
function routingKey(spec) {
  return routingKeyOfProto(specToProto(spec));
}

module.exports = {
  specToProto, routingKey, routingKeyOfProto, fnv1a64Hex, rowWidth,
  ROUTING_KEY_HEADER,
};
