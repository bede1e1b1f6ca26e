// The in-page loop under Playwright for Node, for side_by_side.py (as bench/worker.py drives credemu-bench worker):
// Playwright's own authenticator (`context.credentials.install()`) and credemu through the JS client's Playwright
// surface (`credentials(context, { pack: 'gpm', server: new Client(API) }).install()`), each in a context of its own
// in Playwright-launched Chromium (the same binary). Usage: node playwright_js.mjs API PAGE_URL LOOP_FILE
// CREATE_FILE, with playwright-core at $PLAYWRIGHT_CORE (the Python wheel's driver package); then one
// `FIGURE SECONDS` line in (js-own-create, js-own-get, js-credemu-create, js-credemu-get, js-client-create, js-client-get, quit), `FIGURE RATE` out.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, credentials } from '../clients/js/credemu.mjs';

const [api, pageUrl, loopFile, createFile] = process.argv.slice(2);
const loop = readFileSync(loopFile, 'utf8');
const create = readFileSync(createFile, 'utf8');
const { chromium } = await import(pathToFileURL(join(process.env.PLAYWRIGHT_CORE, 'index.mjs')).href);
// credemu twice: in a Chromium with a DevTools port, where credemu serve answers the page over a paired channel,
// and in one without, where the JS client relays the shim's calls from Playwright's exposeBinding.
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--remote-debugging-port=0'] });
const plain = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
const own = await browser.newContext();
await own.credentials.install();
const ours = await browser.newContext();
await credentials(ours, { pack: 'gpm', server: new Client(api) }).install();
const relayed = await plain.newContext();
await credentials(relayed, { pack: 'gpm', server: new Client(api) }).install();
const pages = { own: await own.newPage(), credemu: await ours.newPage(), client: await relayed.newPage() };
for (const page of Object.values(pages)) {
  await page.goto(pageUrl);
  await page.evaluate(create);
  await page.evaluate(`(${loop})('get', 0.2)`);
}
console.log('ready 0');
for await (const line of createInterface({ input: process.stdin })) {
  const [name, seconds] = line.trim().split(/\s+/);
  if (name === 'quit') break;
  const match = /^js-(own|credemu|client)-(create|get)$/.exec(name);
  if (!match) { console.log(`${name} -1`); continue; }
  const rate = await pages[match[1]].evaluate(`(${loop})('${match[2]}', ${Number(seconds)})`);
  console.log(`${name} ${rate}`);
}
await ours.close();
await relayed.close();
await browser.close();
await plain.close();
