'use strict';
// table() with { sharedMemory: true } against a real server started with
// --shm_dir (POSENC_SERVER; skipped when unset): the same bits as the bytes,
// and each way the file can be missing or not the server's.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const test = require('node:test');

const { PosencClient } = require('../src/index');
const { specToProto } = require('../src/spec');
const { startServer } = require('./server_process');
const { shmTempDir, codeOf } = require('./helpers');

test('shared memory against a real server', { skip: !process.env.POSENC_SERVER },
  async (t) => {
    const shmDir = shmTempDir(t);
    const server = await startServer([`--shm_dir=${shmDir}`]);
    const plain = new PosencClient(server.target, { timeoutMs: 30000 });
    const clients = [plain];
    // A fresh shared-memory client, and the accept_shared_memory of each of
    // its GetTable requests.
    const dial = () => {
      const client = new PosencClient(server.target,
        { timeoutMs: 30000, sharedMemory: true });
      clients.push(client);
      const accepts = [];
      const unary = client.unary.bind(client);
      client.unary = (method, request, options) => {
        if (method === 'getTable') accepts.push(Boolean(request.acceptSharedMemory));
        return unary(method, request, options);
      };
      return { client, accepts };
    };
    // Where the server says the spec's table lies.
    const serverPath = async (spec) => {
      const response = await plain.unary('getTable',
        { spec: specToProto(spec), acceptSharedMemory: true });
      assert.ok(response.sharedMemory, 'the server answered with bytes');
      return response.sharedMemory.path;
    };
    try {
      await t.test('every dtype: the same bits by both paths', async () => {
        const { client, accepts } = dial();
        for (const dtype of ['float32', 'float64', 'float16', 'bfloat16']) {
          const spec = { d: 64, maxLen: 100, dtype, layout: 'concat_cos_sin' };
          const got = await client.table(spec);
          const want = await plain.table(spec);
          assert.equal(got.sharedMemory, true, dtype);
          assert.equal(want.sharedMemory, undefined, dtype);
          assert.equal(got.dtype, dtype);
          assert.deepEqual(got.shape, [100, 64]);
          assert.ok(got.bytes.equals(want.bytes), dtype);
          assert.deepEqual(got.data, want.data, dtype);
        }
        assert.deepEqual(accepts, [true, true, true, true]);
        assert.ok((await client.stats()).cache.shmFiles > 0n);
      });

      await t.test('a missing file: the bytes, and it keeps asking', async () => {
        const spec = { d: 32, maxLen: 50 };
        fs.unlinkSync(await serverPath(spec));  // as if evicted just now
        const { client, accepts } = dial();
        for (let k = 0; k < 2; k++) {
          const got = await client.table(spec);
          assert.equal(got.sharedMemory, undefined);
          assert.ok(got.bytes.equals((await plain.table(spec)).bytes));
        }
        assert.deepEqual(accepts, [true, false, true, false]);
      });

      await t.test('a planted directory: DATA_LOSS naming the inode', async () => {
        const spec = { d: 16, maxLen: 40, dtype: 'float64' };
        const file = await serverPath(spec);
        const dir = path.dirname(file);
        // Another directory at the server's name, holding a read-only file
        // of the same name and size (and owner: the tests run as the
        // server's user) with other bytes.
        fs.renameSync(dir, `${dir}.moved`);
        try {
          fs.mkdirSync(dir, { mode: 0o755 });
          const size = fs.statSync(path.join(`${dir}.moved`, path.basename(file))).size;
          fs.writeFileSync(file, Buffer.alloc(size), { mode: 0o444 });
          const { client } = dial();
          const got = await codeOf(client.table(spec));
          assert.match(got, new RegExp(`^DATA_LOSS .*${file}.*inode`));
          assert.doesNotMatch(got, /size|owner/);
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
          fs.renameSync(`${dir}.moved`, dir);
        }
      });

      await t.test('an unopenable directory: the bytes, and it stops asking',
        async () => {
          const spec = { d: 8, maxLen: 30, dtype: 'bfloat16' };
          const dir = path.dirname(await serverPath(spec));
          fs.renameSync(dir, `${dir}.away`);  // not the server's host
          try {
            const { client, accepts } = dial();
            for (let k = 0; k < 2; k++) {
              const got = await client.table(spec);
              assert.equal(got.sharedMemory, undefined);
              assert.ok(got.bytes.equals((await plain.table(spec)).bytes));
            }
            assert.deepEqual(accepts, [true, false, false]);
          } finally {
            fs.renameSync(`${dir}.away`, dir);
          }
        });
    } finally {
      for (const client of clients) client.close();
      await server.stop();
    }
  });
