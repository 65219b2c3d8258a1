// Bootstrap of the segment merge thread (merge-worker-client.ts): registers the TypeScript loader from the
// sources, as ingest-worker-boot.cjs does (see there why its CommonJS hooks); compiled (dist/, bin/build.js),
// this file sits next to the bundled entry and imports it.
const fs = require('node:fs');
const path = require('node:path');

if (fs.existsSync(path.join(__dirname, 'merge-worker.ts'))) {
  require('tsx/cjs/api').register();
  require('./merge-worker.ts');
} else {
  import('./merge-worker.js');
}
