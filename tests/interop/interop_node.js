'use strict';
// Runs the interop script (tests/interop/SCRIPT.md) with the Node client and
// prints one line per call. With --shared-memory it fetches the script's
// GetTable tables through shared memory instead (the server runs with
// --shm_dir): their lines, then how many were read from the server's files.
// Usage: node interop_node.js HOST:PORT [CLIENT_DIR] [--shared-memory]

const crypto = require('node:crypto');
const path = require('node:path');

const args = process.argv.slice(2).filter((a) => a !== '--shared-memory');
const sharedMemory = args.length !== process.argv.length - 2;
const clientDir = args[1] ??
    path.resolve(__dirname, '..', '..', 'client', 'node');
const { PosencClient, PosencError, routingKey } = require(clientDir);

function sha256(buffers) {
  const hash = crypto.createHash('sha256');
  for (const b of buffers) hash.update(b);
  return hash.digest('hex');
}

function payloadLine(rpc, name, dtype, rows, d, buffers) {
  console.log(`${rpc} ${name} ${dtype} ${rows}x${d} sha256=${sha256(buffers)}`);
}

// Prints the line of a tensor call; returns the tensor, or undefined.
async function tensorLine(rpc, name, promise) {
  try {
    const t = await promise;
    payloadLine(rpc, name, t.dtype, t.shape[0], t.shape[1], [t.bytes]);
    return t;
  } catch (error) {
    if (!(error instanceof PosencError)) throw error;
    console.log(`${rpc} ${name} ${error.codeName}`);
    return undefined;
  }
}

async function main() {
  const client = new PosencClient(args[0],
                                  { timeoutMs: 20000, sharedMemory });
  try {
    const d4 = { d: 4, maxLen: 16 };
    const d512 = { d: 512, base: 500.5, maxLen: 40, dtype: 'float64',
                   layout: 'concat_sin_cos' };
    const d1024 = { d: 1024, base: 1e6, maxLen: 24, dtype: 'float16',
                    frequency: 't2t' };
    const d64 = { d: 64, maxLen: 100, dtype: 'bfloat16',
                  layout: 'concat_cos_sin' };
    const llama3 = {
      d: 128, base: 500000, maxLen: 32, dtype: 'bfloat16',
      layout: 'rotate_half',
      rope: { type: 'llama3', factor: 8, originalMaxPositionEmbeddings: 8192,
              lowFreqFactor: 1, highFreqFactor: 4 } };
    const yarn = {
      d: 64, base: 150000, maxLen: 16, dtype: 'float32',
      layout: 'interleaved_pairs',
      rope: { type: 'yarn', factor: 32, originalMaxPositionEmbeddings: 4096,
              betaFast: 32, betaSlow: 1, truncate: false } };
    const shortFactor = [1, 1.05, 1.1, 1.25, 1.5, 2, 3, 4.5];
    const longFactor = [1, 1.5, 2.5, 4, 7, 12, 20, 32.5];
    const longrope = {
      d: 16, maxLen: 16, dtype: 'float64', layout: 'concat_cos_sin',
      rope: { type: 'longrope', factor: 32,
              originalMaxPositionEmbeddings: 4096, seqLen: 8192,
              shortFactor, longFactor } };
    const dynamic = {
      d: 32, maxLen: 40, dtype: 'float16', layout: 'rotate_half',
      rope: { type: 'dynamic', factor: 2, originalMaxPositionEmbeddings: 16,
              seqLen: 40 } };
    const badList = {
      d: 16, maxLen: 16, dtype: 'float64', layout: 'concat_cos_sin',
      rope: { type: 'longrope', factor: 32,
              originalMaxPositionEmbeddings: 4096, seqLen: 8192,
              shortFactor: shortFactor.slice(0, 7), longFactor } };
    const yarnPrf = {
      d: 64, maxLen: 1, dtype: 'bfloat16', layout: 'rotate_half',
      partialRotaryFactor: 0.5,
      rope: { type: 'yarn', factor: 40, originalMaxPositionEmbeddings: 4096,
              betaFast: 32, betaSlow: 1, mscale: 1, mscaleAllDim: 0.707 } };
    // A grid table, maxLen unset.
    const crop = { d: 32, dtype: 'float16', layout: 'concat_sin_cos', grid: {
      axes: [
        { size: 3, channels: 16, firstIndex: 10, positionNumerator: 1,
          positionDenominator: 3 },
        { size: 5, channels: 16, firstIndex: 9, positionNumerator: 1,
          positionDenominator: 3 }],
      channelOrder: [1, 0], extraZeroRows: 1 } };

    if (sharedMemory) {
      const tables = [['d4_f32', d4], ['d512_f64_concat', d512],
        ['d1024_f16_t2t', d1024], ['d64_bf16_cossin', d64],
        ['rope_llama3_bf16', llama3], ['rope_yarn_pairs_f32', yarn],
        ['rope_longrope_f64', longrope], ['grid_crop_f16', crop]];
      let read = 0;
      for (const [name, spec] of tables) {
        const table = await tensorLine('GetTable', name, client.table(spec));
        if (table?.sharedMemory) read++;
      }
      console.log(`SharedMemory mapped ${read} of ${tables.length}`);
      return;
    }

    await tensorLine('GetTable', 'd4_f32', client.table(d4));
    await tensorLine('GetTable', 'd512_f64_concat', client.table(d512));
    await tensorLine('GetTable', 'd1024_f16_t2t', client.table(d1024));
    await tensorLine('GetTable', 'd64_bf16_cossin', client.table(d64));

    const rows = [];
    let dtype;
    for await (const { row } of client.rows({ d: 512, maxLen: 64 },
                                            { start: 5, end: 37 })) {
      rows.push(row.bytes);
      dtype = row.dtype;
    }
    payloadLine('StreamRows', 'd512_f32_5_37', dtype, rows.length, 512, rows);
    const batches = [];
    let count = 0;
    for await (const { batch } of client.batches(
        { d: 256, maxLen: 128, dtype: 'bfloat16', frequency: 't2t' },
        { start: 3, end: 100, rowsPerBatch: 7 })) {
      batches.push(batch.bytes);
      count += batch.shape[0];
      dtype = batch.dtype;
    }
    payloadLine('StreamBatches', 'd256_bf16_t2t_3_100_by7', dtype, count, 256,
                batches);
    await tensorLine('GetRows', 'd128_f16_concat', client.gather(
        { d: 128, base: 1234.5, maxLen: 64, dtype: 'float16',
          layout: 'concat_sin_cos' },
        [9, 0, 9, 63, 1, 2, 2, 40]));

    await tensorLine('GetTable', 'odd_d', client.table({ d: 5, maxLen: 8 }));
    await tensorLine('GetRows', 'past_max_len',
                     client.gather({ d: 4, maxLen: 16 }, [3, 16]));
    await tensorLine('GetTable', 'over_max_message',
                     client.table({ d: 1024, maxLen: 512 }));

    const stats = await client.stats();
    console.log(`GetStats max_message_bytes ${stats.server.maxMessageBytes}`);

    // RoPE.
    await tensorLine('GetTable', 'rope_llama3_bf16', client.table(llama3));
    await tensorLine('GetTable', 'rope_yarn_pairs_f32', client.table(yarn));
    await tensorLine('GetTable', 'rope_longrope_f64', client.table(longrope));
    const ropeBatches = [];
    count = 0;
    for await (const { batch } of client.batches(
        dynamic, { start: 0, end: 40, rowsPerBatch: 5 })) {
      ropeBatches.push(batch.bytes);
      count += batch.shape[0];
      dtype = batch.dtype;
    }
    payloadLine('StreamBatches', 'rope_dynamic_f16_by5', dtype, count, 64,
                ropeBatches);
    await tensorLine('GetTable', 'rope_bad_list', client.table(badList));

    // Encode.
    const flux = { dim: 256, layout: 'concat_cos_sin', scale: 1000 };
    await tensorLine('Encode', 'flux_t_f32',
                     client.encode(flux, [0, 0.25, 0.5, 0.999, 1 / 3]));
    await tensorLine('Encode', 'sd_pad_f16', client.encode(
        { dim: 321, padOddDim: true, layout: 'concat_cos_sin',
          dtype: 'float16' },
        [999.5, 0, 1, 500.25, -3.75]));
    await tensorLine('Encode', 'diffusers_shift1_f64', client.encode(
        { dim: 64, layout: 'concat_sin_cos', shift: 1, dtype: 'float64' },
        [0.001, 999, 123.456]));
    await tensorLine('Encode', 'nerf_bf16', client.encode(
        { frequency: 'octaves', layout: 'concat_sin_cos', numFrequencies: 10,
          minFreqExp: 0, maxFreqExp: 8, coordinates: 3, includeInput: true,
          dtype: 'bfloat16' },
        [[0.5, -0.25, 0.1], [0.3, 1, -0.75]]));
    await tensorLine('Encode', 'flux_rope_pairs_f32', client.encode(
        { axesDim: [4, 6, 6], layout: 'interleaved_pairs' },
        [[0, 0, 0], [0, 1, 2], [0, 31, 17]]));
    await tensorLine('Encode', 'qwen2_mrope_bf16', client.encode(
        { dim: 16, maxPeriod: 1e6, mropeSection: [2, 3, 3],
          layout: 'rotate_half', dtype: 'bfloat16' },
        [[7, 7, 7], [10, 11, 12], [10, 11, 13]]));
    await tensorLine('Encode', 'odd_dim', client.encode({ dim: 5 }, [1]));
    await tensorLine('Encode', 'past_limit', client.encode(flux, [17000]));

    // A grid table, maxLen unset.
    await tensorLine('GetTable', 'grid_crop_f16', client.table(crop));

    console.log('Key d4_f32 ' + routingKey({ d: 4, maxLen: 1 }));
    console.log('Key d512_f64_concat ' + routingKey({ d: 512, maxLen: 1, base: 500.5, dtype: 'float64', layout: 'concat_sin_cos' }));
    console.log('Key d1024_f16_t2t ' + routingKey({ d: 1024, maxLen: 1, base: 1e6, dtype: 'float16', frequency: 't2t' }));
    console.log('Key d64_bf16_cossin ' + routingKey({ d: 64, maxLen: 1, dtype: 'bfloat16', layout: 'concat_cos_sin' }));
    console.log('Key d256_bf16_t2t ' + routingKey({ d: 256, maxLen: 1, dtype: 'bfloat16', frequency: 't2t' }));
    console.log('Key d128_f16_concat ' + routingKey({ d: 128, maxLen: 1, base: 1234.5, dtype: 'float16', layout: 'concat_sin_cos' }));
    console.log('Key base_1e21 ' + routingKey({ d: 8, maxLen: 1, base: 1e21 }));
    console.log('Key base_5e-324 ' + routingKey({ d: 8, maxLen: 1, base: 5e-324 }));
    console.log('Key base_0.1 ' + routingKey({ d: 8, maxLen: 1, base: 0.1 }));
    console.log('Key base_123456789012345680000 ' + routingKey({ d: 8, maxLen: 1, base: 123456789012345680000 }));
    console.log('Key base_1e-7 ' + routingKey({ d: 8, maxLen: 1, base: 1e-7 }));
    console.log('Key base_1.7976931348623157e308 ' + routingKey({ d: 8, maxLen: 1, base: 1.7976931348623157e308 }));
    console.log('Key base_0.30000000000000004 ' + routingKey({ d: 8, maxLen: 1, base: 0.30000000000000004 }));
    console.log('Key base_1e16 ' + routingKey({ d: 8, maxLen: 1, base: 1e16 }));
    console.log('Key rope_llama3_bf16 ' + routingKey(llama3));
    console.log('Key rope_yarn_pairs_f32 ' + routingKey(yarn));
    console.log('Key rope_longrope_f64 ' + routingKey(longrope));
    console.log('Key rope_dynamic_f16 ' + routingKey(dynamic));
    console.log('Key rope_bad_list ' + routingKey(badList));
    console.log('Key rope_yarn_prf ' + routingKey(yarnPrf));
    console.log('Key grid_crop_f16 ' + routingKey(crop));
    const example = await client.gather({ d: 4, maxLen: 16 }, [2]);
    console.log(['Example', 'd4_pos2',
                 ...Array.from(example.data, (v) => v.toFixed(4))].join(' '));
  } finally {
    client.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
