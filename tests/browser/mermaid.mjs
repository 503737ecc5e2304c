// The PR comment's Mermaid chart as mermaid-cli rendered it: an SVG with the bars and the line
// of the chart, opened in headless Chromium without errors.   node mermaid.mjs chart.svg
import { chromium } from 'playwright-core';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const file = process.argv[2];
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
await page.goto(pathToFileURL(resolve(file)).href);
const got = await page.evaluate(() => ({
  text: document.documentElement.textContent,
  bars: document.querySelectorAll('.bar-plot-0 rect, g[class*="bar-plot"] rect').length,
  lines: document.querySelectorAll('g[class*="line-plot"] path').length,
  error: document.documentElement.textContent.includes('Syntax error'),
}));
await browser.close();
const problems = [];
if (errors.length) problems.push(`errors: ${errors.join(' | ')}`);
if (got.error) problems.push('mermaid drew a syntax error');
if (got.bars < 1) problems.push('no bar drawn');
if (got.lines < 1) problems.push('no line drawn');
if (!got.text.includes('schedule_appointment')) problems.push('tool name missing from the axis');
if (problems.length) {
  console.error(`mermaid.mjs: ${problems.join('; ')}`);
  process.exit(1);
}
console.log(`mermaid.mjs: chart rendered: ${got.bars} bar(s), ${got.lines} line(s)`);
