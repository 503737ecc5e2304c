// The PR comment as a reviewer sees it: the calendar example's Markdown comment (check.md)
// rendered with marked (GitHub-flavoured), its Mermaid block replaced by the SVG mermaid-cli drew,
// in a page styled like a GitHub comment, opened in headless Chromium with no request beyond
// itself, no console error and no script; a screenshot of it (the README's docs/img/pr-comment.png
// is a copy).   node comment.mjs DIR   (reads DIR/check.md and DIR/chart.svg, writes
// DIR/comment.html and DIR/comment.png)
import { chromium } from 'playwright-core';
import { marked } from 'marked';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.argv[2];
const md = readFileSync(join(dir, 'check.md'), 'utf8');
const svg = readFileSync(join(dir, 'chart.svg'), 'utf8');
// GitHub renders the fenced mermaid block as the chart; here it is the SVG mermaid-cli drew.
const withChart = md.replace(/```+mermaid\n[\s\S]*?\n```+\n/, '<div class="chart">\n\nCHART\n\n</div>\n');
let body = marked.parse(withChart, { gfm: true });
body = body.replace('<p>CHART</p>', svg.replace(/<\?xml[^>]*>/, ''));
// GitHub's callouts ("> [!WARNING]") as coloured quotes.
body = body.replace(/<blockquote>\n<p>\[!(NOTE|WARNING|CAUTION)\]/g, (_, k) => `<blockquote class="${k.toLowerCase()}">\n<p><strong>${k[0]}${k.slice(1).toLowerCase()}</strong>`);
const page_ = `<!doctype html><html><head><meta charset="utf-8"><title>PR comment</title><style>
body{font:14px/1.5 -apple-system,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif;color:#1f2328;background:#fff;margin:0}
.comment{max-width:880px;margin:16px auto;border:1px solid #d1d9e0;border-radius:6px}
.head{background:#f6f8fa;border-bottom:1px solid #d1d9e0;padding:8px 16px;color:#59636e;border-radius:6px 6px 0 0}
.body{padding:16px}
h3{font-size:1.25em;margin:0 0 16px}h4{font-size:1em;margin:24px 0 8px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:85%;background:#eff1f3;border-radius:6px;padding:.2em .4em}
pre{background:#f6f8fa;border-radius:6px;padding:12px;overflow:auto}pre code{background:none;padding:0}
table{border-collapse:collapse;display:block;overflow:auto;margin:8px 0}th,td{border:1px solid #d1d9e0;padding:4px 10px}tr:nth-child(2n){background:#f6f8fa}
blockquote{margin:8px 0;padding:0 12px;border-left:4px solid #d1d9e0;color:#59636e}
blockquote.warning{border-color:#9a6700}blockquote.caution{border-color:#d1242f}blockquote.note{border-color:#0969da}
.chart svg{max-width:100%;height:auto}sub{color:#59636e}
</style></head><body><div class="comment"><div class="head"><strong>github-actions</strong> bot commented</div><div class="body">
${body}
</div></div></body></html>`;
writeFileSync(join(dir, 'comment.html'), page_);

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const url = pathToFileURL(resolve(join(dir, 'comment.html'))).href;
const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 960, height: 900 } });
const page = await context.newPage();
const problems = [];
await context.route('**/*', (route) => {
  if (route.request().url() === url) return route.continue();
  problems.push(`request attempted: ${route.request().url()}`);
  return route.abort();
});
page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
await page.goto(url, { waitUntil: 'load' });
const dom = await page.evaluate(() => ({
  heading: document.querySelector('h3')?.textContent ?? '',
  svgs: document.querySelectorAll('.chart svg').length,
  rows: document.querySelectorAll('table tr').length,
  diff: [...document.querySelectorAll('pre code')].some((c) => c.textContent.includes('+ Book a slot.')),
}));
if (!dom.heading.includes('schedule_appointment: 7 of 8 prompts reached it before, 2 of 8 now')) {
  problems.push(`the first line is not the plain-words verdict: ${dom.heading}`);
}
if (dom.svgs !== 1) problems.push(`${dom.svgs} chart(s)`);
if (dom.rows < 10) problems.push(`${dom.rows} table row(s)`);
if (!dom.diff) problems.push('the text diff is missing');
const shot = join(dir, 'comment.png');
await page.screenshot({ path: shot, fullPage: true });
const size = statSync(shot).size;
if (size < 20000) problems.push(`screenshot of ${size} bytes`);
await browser.close();
if (problems.length) {
  console.error(`comment.mjs: ${problems.length} problem(s):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`comment.mjs: the PR comment renders: ${dom.rows} table row(s), ${dom.svgs} chart, screenshot ${size} bytes`);
