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
};
const FREQUENCIES = { paper: 'FREQUENCY_PAPER', t2t: 'FREQUENCY_T2T' };

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
 * @property {string} [layout]     interleaved (default) | concat_sin_cos | concat_cos_sin
 * @property {string} [frequency]  paper (default) | t2t
 */

/** @param {TableSpec} spec */
function specToProto(spec) {
  return {
    d: spec.d,
    base: spec.base ?? 0,
    maxLen: spec.maxLen,
    dtype: lookup(DTYPES, 'dtype', spec.dtype ?? 'float32'),
    layout: lookup(LAYOUTS, 'layout', spec.layout ?? 'interleaved'),
    frequency: lookup(FREQUENCIES, 'frequency', spec.frequency ?? 'paper'),
  };
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
  return `d=${proto.d ?? 0};base=${String(base)}` +
    `;dtype=${enumKeyName(proto.dtype, 'DTYPE_', 'float32')}` +
    `;layout=${enumKeyName(proto.layout, 'LAYOUT_', 'interleaved')}` +
    `;freq=${enumKeyName(proto.frequency, 'FREQUENCY_', 'paper')}`;
}

/** @param {TableSpec} spec */
function routingKey(spec) {
  return routingKeyOfProto(specToProto(spec));
}

module.exports = { specToProto, routingKey, routingKeyOfProto, ROUTING_KEY_HEADER };
