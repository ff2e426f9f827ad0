'use strict';
// README's example: a small table and a bfloat16 batch stream from a local
// server. From a checkout, `posenc` is this package ('..').
const { PosencClient, PosencError, bfloat16ToNumber } = require('..');

async function main() {
  const client = new PosencClient('127.0.0.1:50320', { timeoutMs: 10000 });
  const table = await client.table({ d: 4, maxLen: 16 });
  console.log(table.dtype, table.shape, table.data.subarray(8, 12));
  const spec = { d: 512, maxLen: 100, dtype: 'bfloat16' };
  for await (const { start, batch } of client.batches(spec, { rowsPerBatch: 64 })) {
    console.log(start, batch.shape, Array.from(batch.data.subarray(0, 2), bfloat16ToNumber));
  }
  await client.table({ d: 5, maxLen: 8 }).catch((e) => {
    if (e instanceof PosencError) console.log(e.codeName, e.details);
  });
  client.close();
}
main();
