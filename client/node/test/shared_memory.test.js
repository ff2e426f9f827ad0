'use strict';
// Shared-memory tables (docs/shared_memory.md): readShared on files planted
// in a fresh /dev/shm directory.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const test = require('node:test');

const { readShared, xxh64, FALLBACK, NO_DIRECTORY } =
  require('../src/shared_memory');
const { shmTempDir, codeOf } = require('./helpers');

test('xxh64 is XXH64 with seed 0', async () => {
  assert.equal(await xxh64(Buffer.alloc(0)), 0xef46db3751d8e999n);
  assert.equal(await xxh64(Buffer.from('abc')), 0x44bc2cf5ad770999n);
});

test('readShared on planted files', async (t) => {
  const dir = shmTempDir(t);
  // A read-only file described as the server would: a float32 [2, 4]
  // tensor at offset 64; uint64 fields as strings (longs: String).
  const data = Buffer.from(Array.from({ length: 96 }, (_, k) => (7 * k) & 255));
  const file = path.join(dir, 'table-0123456789abcdef-fedcba9876543210');
  fs.writeFileSync(file, data, { mode: 0o444 });
  const st = fs.statSync(file, { bigint: true });
  const shm = {
    path: file, offset: '64', dtype: 'DTYPE_FLOAT32', shape: [2, 4],
    sizeBytes: '32', fileBytes: '96',
    fileXxh64: (await xxh64(data)).toString(), ownerUid: Number(st.uid),
    inode: st.ino.toString(),
  };

  await t.test('the server\'s file: the tensor is its bytes [offset, +size)',
    async () => {
      const tensor = await readShared(shm);
      assert.equal(tensor.dtype, 'float32');
      assert.deepEqual(tensor.shape, [2, 4]);
      assert.equal(tensor.sharedMemory, true);
      assert.deepEqual(tensor.bytes, data.subarray(64));
      assert.deepEqual(Array.from(tensor.data),
        Array.from(new Float32Array(data.buffer.slice(data.byteOffset + 64,
          data.byteOffset + 96))));
    });

  await t.test('each fstat or digest mismatch: DATA_LOSS naming it',
    async () => {
      for (const [field, value, name] of [
        ['inode', (st.ino + 1n).toString(), 'inode'],
        ['ownerUid', Number(st.uid) + 1, 'owner uid'],
        ['fileBytes', '160', 'size'],
        ['fileXxh64', ((await xxh64(data)) ^ 1n).toString(), 'XXH64'],
      ]) {
        const got = await codeOf(readShared({ ...shm, [field]: value }));
        assert.match(got, new RegExp(`^DATA_LOSS .*${file}.*${name}`), field);
      }
    });

  await t.test('a writable file: DATA_LOSS', async () => {
    fs.chmodSync(file, 0o644);
    try {
      assert.match(await codeOf(readShared(shm)), /^DATA_LOSS .*writable/);
    } finally {
      fs.chmodSync(file, 0o444);
    }
  });

  await t.test('a symlink or a missing file: fallback, keeps asking',
    async () => {
      const link = path.join(dir, 'link');
      fs.symlinkSync(file, link);
      assert.equal(await readShared({ ...shm, path: link }), FALLBACK);
      assert.equal(await readShared({ ...shm, path: path.join(dir, 'gone') }),
        FALLBACK);
    });

  await t.test('a missing directory: fallback, stops asking', async () => {
    assert.equal(await readShared(
      { ...shm, path: path.join(dir, 'elsewhere', 'table') }), NO_DIRECTORY);
  });

  await t.test('a tensor outside the file: INTERNAL', async () => {
    assert.match(await codeOf(readShared({ ...shm, offset: '96' })),
      /^INTERNAL /);
  });
});
