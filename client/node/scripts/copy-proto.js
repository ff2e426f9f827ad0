'use strict';
// prepack: copies the repository's proto/posenc/v1/posenc.proto into this
// package's proto/, so a packed tarball carries the proto it loads.
// postpack (--remove): deletes the copy again, so a checkout keeps loading
// the repository's proto/ and never a stale copy.
const fs = require('node:fs');
const path = require('node:path');

const rel = path.join('posenc', 'v1', 'posenc.proto');
const from = path.resolve(__dirname, '..', '..', '..', 'proto', rel);
const dir = path.resolve(__dirname, '..', 'proto');
if (process.argv.includes('--remove')) {
  fs.rmSync(dir, { recursive: true, force: true });
} else {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.copyFileSync(from, path.join(dir, rel));
}
