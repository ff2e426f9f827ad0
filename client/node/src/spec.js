'use strict';
// TableSpec and EncodingSpec objects (camelCase, friendly names) to request
// messages.

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
  rotation_matrix: 'LAYOUT_ROTATION_MATRIX',
};
const FREQUENCIES = { paper: 'FREQUENCY_PAPER', t2t: 'FREQUENCY_T2T' };
const FREQUENCY_SCHEMES = {
  exponential: 'FREQUENCY_SCHEME_EXPONENTIAL',
  octaves: 'FREQUENCY_SCHEME_OCTAVES',
};
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
 * @property {GridSpec} [grid]    a grid table (docs/encodings.md "Grid
 *   tables"): d the sum of the axes' channels, maxLen 0 or unset (the
 *   grid's rows)
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

/**
 * The points of a grid table, the proto's GridSpec in camelCase: axes in
 * row order (the first varies slowest), each { size, channels, firstIndex,
 * positionNumerator, positionDenominator } (positions (firstIndex + k) *
 * num / den, 0 = 1); channelOrder the axes in the order of their blocks
 * ([] = row order; MAE [1, 0]); sinCos per_axis (default) | grouped;
 * extraZeroRows zero rows first (cls tokens).
 * @typedef {object} GridSpec
 * @property {object[]} axes
 * @property {number[]} [channelOrder]
 * @property {string} [sinCos]
 * @property {number} [extraZeroRows]
 */

const GRID_SIN_COS = {
  per_axis: 'GRID_SIN_COS_PER_AXIS', grouped: 'GRID_SIN_COS_GROUPED',
};

/** @param {GridSpec} grid */
function gridToProto(grid) {
  return {
    axes: (grid.axes ?? []).map((a) => ({
      size: a.size ?? 0,
      channels: a.channels ?? 0,
      firstIndex: a.firstIndex ?? 0,
      positionNumerator: a.positionNumerator ?? 0,
      positionDenominator: a.positionDenominator ?? 0,
    })),
    channelOrder: Array.from(grid.channelOrder ?? [], Number),
    sinCos: lookup(GRID_SIN_COS, 'grid.sinCos', grid.sinCos ?? 'per_axis'),
    extraZeroRows: grid.extraZeroRows ?? 0,
  };
}

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
// A spec the server wrote (ResolvePreset): already the proto, every field
// explicit; sent as is.
const RESOLVED_PROTO = Symbol('posenc.resolvedProto');

function specToProto(spec) {
  if (spec && spec[RESOLVED_PROTO]) return spec[RESOLVED_PROTO];
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
  if (spec.grid !== undefined && spec.grid !== null) {
    proto.grid = gridToProto(spec.grid);
    if (proto.maxLen === undefined) proto.maxLen = 0;
  }
  return proto;
}

/**
 * An encoding of real-valued points (Encode): diffusion timesteps,
 * flow-matching times, NeRF coordinates. The proto's EncodingSpec fields in
 * camelCase; unset (or 0 / false) means the server's default. The server
 * checks the values (INVALID_ARGUMENT naming the field).
 * @typedef {object} EncodingSpec
 * @property {number} [dim]        exponential: channels per coordinate
 * @property {string} [dtype]      float32 (default) | float64 | float16 | bfloat16
 * @property {string} [layout]     interleaved (default) | concat_sin_cos |
 *   concat_cos_sin
 * @property {string} [frequency]  exponential (default: f_i =
 *   maxPeriod^(-i / (half - shift))) | octaves (f_k = 2 pi 2^(e_k))
 * @property {number} [maxPeriod]  exponential; 0 or unset = 10000
 * @property {number} [shift]      exponential (diffusers downscale_freq_shift)
 * @property {number} [scale]      every angle is scale * x * f; unset = 1
 * @property {boolean} [padOddDim] one zero column for an odd dim
 * @property {number} [numFrequencies]  octaves
 * @property {number} [minFreqExp]      octaves
 * @property {number} [maxFreqExp]      octaves
 * @property {number} [coordinates]     values per point; unset = 1
 * @property {boolean} [includeInput]   append the point's coordinates
 * @property {number[]} [axesDim]       multi-axis RoPE: FLUX EmbedND's
 *   axes_dim, e.g. [16, 56, 56] (coordinates unset = the axes)
 * @property {number[]} [mropeSection]  multi-axis RoPE: Qwen2-VL's
 *   mrope_section, e.g. [16, 24, 24], with dim = head_dim
 * @property {boolean} [mropeInterleaved] Qwen3-VL's interleaved sections
 * Multi-axis specs also take layout rotate_half | interleaved_pairs |
 * rotation_matrix (FLUX: shape [points, K, 2, 2]).
 */

/** @param {EncodingSpec} spec */
function encodingSpecToProto(spec) {
  if (spec && spec[RESOLVED_PROTO]) return spec[RESOLVED_PROTO];
  return {
    dim: spec.dim ?? 0,
    dtype: lookup(DTYPES, 'dtype', spec.dtype ?? 'float32'),
    layout: lookup(LAYOUTS, 'layout', spec.layout ?? 'interleaved'),
    frequency: lookup(FREQUENCY_SCHEMES, 'frequency',
                      spec.frequency ?? 'exponential'),
    maxPeriod: spec.maxPeriod ?? 0,
    shift: spec.shift ?? 0,
    scale: spec.scale ?? 0,
    padOddDim: spec.padOddDim ?? false,
    numFrequencies: spec.numFrequencies ?? 0,
    minFreqExp: spec.minFreqExp ?? 0,
    maxFreqExp: spec.maxFreqExp ?? 0,
    coordinates: spec.coordinates ?? 0,
    includeInput: spec.includeInput ?? false,
    axesDim: Array.from(spec.axesDim ?? [], Number),
    mropeSection: Array.from(spec.mropeSection ?? [], Number),
    mropeInterleaved: spec.mropeInterleaved ?? false,
  };
}

/**
 * Channels per row the server returns for a valid EncodingSpec:
 * 2 * coordinates * half (half: floor(dim / 2), or numFrequencies for
 * octaves), plus 1 with padOddDim, plus coordinates with includeInput.
 * @param {EncodingSpec} spec
 */
function encodingWidth(spec) {
  const axes = spec.axesDim ?? [];
  if (axes.length > 0 || (spec.mropeSection ?? []).length > 0) {
    // K pairs: 2K values, 4K in the RoPE layouts and rotation matrices.
    const k = axes.length > 0 ? axes.reduce((a, n) => a + Math.floor(n / 2), 0) :
      Math.floor((spec.dim ?? 0) / 2);
    const wide = ['rotate_half', 'interleaved_pairs', 'rotation_matrix']
      .includes(spec.layout);
    return (wide ? 4 : 2) * k;
  }
  const coordinates = spec.coordinates || 1;
  const half = spec.frequency === 'octaves' ? (spec.numFrequencies ?? 0) :
    Math.floor((spec.dim ?? 0) / 2);
  return 2 * coordinates * half + (spec.padOddDim ? 1 : 0) +
    (spec.includeInput ? coordinates : 0);
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
  if (proto.grid) key += gridKeySuffix(proto.grid);
  return key;
}

// ";grid=<size>:<channels>:<first>:<num>/<den>,...;order=...;sin_cos=...;
// extra=..." (posenc.proto, Routing key): the fraction's zeros taken as 1
// and reduced by its gcd; order the channel order, or 0,1,... when unset.
function gridKeySuffix(grid) {
  const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));
  const axes = (grid.axes ?? []).map((a) => {
    const num = a.positionNumerator || 1;
    const den = a.positionDenominator || 1;
    const c = gcd(num, den);
    return `${a.size ?? 0}:${a.channels ?? 0}:${a.firstIndex ?? 0}:` +
      `${num / c}/${den / c}`;
  });
  const order = (grid.channelOrder ?? []).length ?
    Array.from(grid.channelOrder, String) :
    axes.map((_, k) => String(k));
  return `;grid=${axes.join(',')};order=${order.join(',')}` +
    `;sin_cos=${enumKeyName(grid.sinCos, 'GRID_SIN_COS_', 'per_axis')}` +
    `;extra=${grid.extraZeroRows ?? 0}`;
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
  encodingSpecToProto, encodingWidth, ROUTING_KEY_HEADER, RESOLVED_PROTO,
};
