// Bootstrap of the window-count thread (count-threads.ts): registers the TypeScript loader from the sources, as
// ingest-worker-boot.cjs does (see there why its CommonJS hooks); compiled (dist/, bin/build.js), this file sits
// next to the bundled entry and imports it.
const fs = require('node:fs');
const path = require('node:path');

if (fs.existsSync(path.join(__dirname, 'count-worker.ts'))) {
  require('tsx/cjs/api').register();
  require('./count-worker.ts');
} else {
  import('./count-worker.js');
}
