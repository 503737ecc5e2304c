// Opens driftgate's HTML reports in headless Chromium (.ci/browser.sh run): no console error, no
// request beyond the page itself, no dialog (a script from tool text would alert), the flip
// filter works with JavaScript on and the page is complete with it off; a full-page screenshot of
// each, its size sane.   node report.mjs DIR PAGE.html...
import { chromium } from 'playwright-core';
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, ...pages] = process.argv.slice(2);
const failures = [];
const fail = (page, what) => failures.push(`${page}: ${what}`);

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

function pngSize(file) {
  const b = readFileSync(file);
  if (b.toString('latin1', 1, 4) !== 'PNG') return null;
  return { w: b.readUInt32BE(16), h: b.readUInt32BE(20), bytes: b.length };
}

async function open(name, javaScriptEnabled) {
  const url = pathToFileURL(resolve(join(dir, name))).href;
  const context = await browser.newContext({ javaScriptEnabled, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const seen = { requests: [], errors: [], dialogs: 0 };
  // Block everything but the page itself, and count what was attempted.
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u === url) return route.continue();
    seen.requests.push(u);
    return route.abort();
  });
  page.on('request', (r) => { if (r.url() !== url && !seen.requests.includes(r.url())) seen.requests.push(r.url()); });
  page.on('console', (m) => { if (m.type() === 'error') seen.errors.push(m.text()); });
  page.on('pageerror', (e) => seen.errors.push(String(e)));
  page.on('dialog', async (d) => { seen.dialogs += 1; await d.dismiss(); });
  await page.goto(url, { waitUntil: 'load' });
  return { context, page, seen };
}

for (const name of pages) {
  for (const js of [true, false]) {
    const tag = `${name} (JavaScript ${js ? 'on' : 'off'})`;
    const { context, page, seen } = await open(name, js);
    if (seen.requests.length) fail(tag, `requests attempted: ${seen.requests.join(', ')}`);
    if (seen.errors.length) fail(tag, `console errors: ${seen.errors.join(' | ')}`);
    if (seen.dialogs) fail(tag, `${seen.dialogs} dialog(s) opened: a script ran`);
    const dom = await page.evaluate(() => ({
      scripts: document.querySelectorAll('script').length,
      foreign: [...document.querySelectorAll('img,iframe,a,link,base,object,embed,form,meta[http-equiv=refresh]')].map((e) => e.outerHTML.slice(0, 80)),
      handlers: [...document.querySelectorAll('*')].flatMap((e) => [...e.attributes].filter((a) => a.name.startsWith('on')).map((a) => `${e.tagName} ${a.name}`)),
      svgs: document.querySelectorAll('svg').length,
      verdict: document.querySelector('.verdict')?.textContent ?? '',
      filterHidden: document.getElementById('flip-filter')?.hidden ?? null,
      flipRows: document.querySelectorAll('#flips tbody tr').length,
      text: document.body.innerText,
    }));
    if (dom.scripts !== 1) fail(tag, `${dom.scripts} script elements, expected only ours`);
    if (dom.foreign.length) fail(tag, `foreign elements: ${dom.foreign.join(' ; ')}`);
    if (dom.handlers.length) fail(tag, `event handler attributes: ${dom.handlers.join(', ')}`);
    if (!dom.verdict) fail(tag, 'no verdict shown');
    if (name === 'hostile.html' && !dom.text.includes('<script>alert(1)</script>')) {
      fail(tag, 'the hostile description is not shown as text');
    }
    if (name !== 'hostile.html' && dom.svgs < 1) fail(tag, 'no chart');
    if (dom.flipRows > 0) {
      // Off: the table is all there and the box stays hidden. On: the box filters rows.
      if (dom.filterHidden !== !js) fail(tag, `flip filter hidden=${dom.filterHidden}`);
      if (js) {
        const first = await page.locator('#flips tbody tr').first().locator('td').nth(name === 'stress.html' ? 1 : 0).innerText();
        await page.fill('#flip-filter', first);
        const visible = await page.locator('#flips tbody tr:visible').count();
        if (!(visible >= 1 && visible < dom.flipRows)) fail(tag, `filter "${first}" left ${visible}/${dom.flipRows} rows`);
        await page.fill('#flip-filter', '');
      }
    } else if (name === 'check.html' || name === 'stress.html') {
      fail(tag, 'no flipped case listed');
    }
    const shot = join(dir, `${name.replace(/\.html$/, '')}${js ? '' : '.nojs'}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    const s = pngSize(shot);
    if (!s || s.w !== 1280 || s.h < 600 || s.h > 30000 || s.bytes < 20000 || s.bytes > 30e6) {
      fail(tag, `screenshot ${JSON.stringify(s)} out of range`);
    }
    console.log(`report.mjs: ${tag}: ${dom.svgs} chart(s), ${dom.flipRows} flip row(s), screenshot ${s?.w}x${s?.h} (${statSync(shot).size} bytes)`);
    await context.close();
  }
}
await browser.close();
if (failures.length) {
  console.error(`report.mjs: ${failures.length} failure(s):\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
