'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { routingKey, rowWidth, fnv1a64Hex } = require('../src/index');
const { specToProto } = require('../src/spec');

// The same lists and hashes as client/python/tests/test_rope.py and Go.
const SHORT = [1.05, 1.05, 1.05, 1.1, 1.1, 1.2, 1.3, 1.5];
const LONG = [1.08, 1.1, 1.3, 2.5, 6.0, 12.0, 30.0, 64.0];

test('fnv1a64Hex hashes little-endian float64 bytes', () => {
  assert.strictEqual(fnv1a64Hex([]), 'cbf29ce484222325');
  assert.strictEqual(fnv1a64Hex(SHORT), '732e9efefed7358c');
  assert.strictEqual(fnv1a64Hex(LONG), '84e1c9d8b811ea04');
});

test('routing key of RoPE specs', () => {
  const plain = 'd=64;base=10000;dtype=float32;layout=interleaved_pairs;freq=paper';
  const cases = [
    [{ d: 128, maxLen: 7, base: 500000, dtype: 'bfloat16', layout: 'rotate_half',
      rope: { type: 'llama3', factor: 8, originalMaxPositionEmbeddings: 8192,
        lowFreqFactor: 1, highFreqFactor: 4 } },
    'd=128;base=500000;dtype=bfloat16;layout=rotate_half;freq=paper;rope=llama3;factor=8;original_max_position_embeddings=8192;low_freq_factor=1;high_freq_factor=4'],
    [{ d: 64, maxLen: 1, layout: 'interleaved_pairs' }, plain],
    [{ d: 64, maxLen: 1, layout: 'interleaved_pairs', rope: {} }, plain],
    [{ d: 64, maxLen: 1, layout: 'interleaved_pairs', rope: { type: 'default' } },
      plain + ';rope=default'],
    [{ d: 64, maxLen: 1, rope: { factor: 2 } },
      'd=64;base=10000;dtype=float32;layout=interleaved;freq=paper;rope=default;factor=2'],
    [{ d: 32, maxLen: 16, layout: 'rotate_half', partialRotaryFactor: 0.5,
      rope: { type: 'longrope', factor: 32, originalMaxPositionEmbeddings: 4096,
        seqLen: 8192, shortFactor: SHORT, longFactor: LONG } },
    'd=16;base=10000;dtype=float32;layout=rotate_half;freq=paper;rope=longrope;factor=32;original_max_position_embeddings=4096;seq_len=8192;short_factor=732e9efefed7358c;long_factor=84e1c9d8b811ea04'],
    [{ d: 64, maxLen: 1, base: 150000, layout: 'rotate_half',
      rope: { type: 'yarn', factor: 32, originalMaxPositionEmbeddings: 4096,
        betaFast: 32, betaSlow: 1, truncate: false } },
    'd=64;base=150000;dtype=float32;layout=rotate_half;freq=paper;rope=yarn;factor=32;original_max_position_embeddings=4096;beta_fast=32;beta_slow=1;truncate=false'],
    [{ d: 8, maxLen: 1, partialRotaryFactor: 0.25, rope: { type: 'linear', factor: 1e-7 } },
      'd=2;base=10000;dtype=float32;layout=interleaved;freq=paper;rope=linear;factor=1e-7'],
    [{ d: 8, maxLen: 1, rope: { type: 'yarn', factor: 40, mscale: 0.707, mscaleAllDim: 1,
      attentionFactor: 1.5 } },
    'd=8;base=10000;dtype=float32;layout=interleaved;freq=paper;rope=yarn;factor=40;mscale=0.707;mscale_all_dim=1;attention_factor=1.5'],
  ];
  for (const [spec, want] of cases) {
    assert.strictEqual(routingKey(spec), want);
  }
});

test('specToProto carries every RoPE field and rejects unknown types', () => {
  const proto = specToProto({ d: 8, maxLen: 2, layout: 'rotate_half',
    partialRotaryFactor: 0.5,
    rope: { type: 'longrope', originalMaxPositionEmbeddings: 4, shortFactor: [1],
      longFactor: [2], truncate: true } });
  assert.deepStrictEqual(proto.rope, { type: 'ROPE_TYPE_LONGROPE',
    originalMaxPositionEmbeddings: 4, shortFactor: [1], longFactor: [2], truncate: true });
  assert.strictEqual(proto.layout, 'LAYOUT_ROTATE_HALF');
  assert.strictEqual(proto.partialRotaryFactor, 0.5);
  assert.throws(() => specToProto({ d: 8, maxLen: 1, rope: { type: 'su' } }),
    /rope.type must be one of/);
});

test('rowWidth: d, d_rot, twice that for the RoPE layouts', () => {
  assert.strictEqual(rowWidth({ d: 64 }), 64);
  assert.strictEqual(rowWidth({ d: 64, layout: 'rotate_half' }), 128);
  assert.strictEqual(rowWidth({ d: 96, layout: 'interleaved_pairs', partialRotaryFactor: 0.5 }), 96);
  assert.strictEqual(rowWidth({ d: 80, partialRotaryFactor: 0.25 }), 20);
});

// The server resolves partialRotaryFactor into d (floor of the double
// product), so (d, factor) and (rotary d, no factor) share a key.
test('routing key folds partialRotaryFactor into d', () => {
  const rope = { type: 'linear', factor: 2 };
  for (const [d, prf, rotary] of [[64, 0.5, 32], [64, 1, 64], [96, 0.25, 24],
    [100, 0.29, 28]]) {  // 100 * 0.29 = 28.999999999999996
    const folded = routingKey({ d, maxLen: 16, layout: 'rotate_half',
      partialRotaryFactor: prf, rope });
    assert.strictEqual(folded,
      routingKey({ d: rotary, maxLen: 16, layout: 'rotate_half', rope }));
    assert.ok(folded.startsWith(`d=${rotary};`), folded);
  }
  assert.strictEqual(routingKey({ d: 64, maxLen: 1, partialRotaryFactor: 1.5 }),
    'd=64;base=10000;dtype=float32;layout=interleaved;freq=paper;prf=1.5');
});
