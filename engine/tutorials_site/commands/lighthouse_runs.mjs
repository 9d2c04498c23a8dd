// Lighthouse runs for `tutorials-site audit` (commands/audit.py), all in this one node process and one browser:
// starting node, loading Lighthouse and launching Chromium took longer than a run itself when each page had a
// process of its own. Lighthouse resets the browser's cache and storage before each run, so that every page is
// measured as on a first visit.
//
// node lighthouse_runs.mjs NODE_MODULES CHROMIUM CATEGORIES CHROME_FLAGS_JSON
// Each line read is a JSON request {url, output, slowdown}; each line written answers one:
// {"ok": true} once the JSON report is at OUTPUT, or {"ok": false, "error": "..."}. Stdin closed: the browser
// is closed and the process ends; SIGTERM or SIGINT closes the browser first too.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import {pathToFileURL} from 'node:url';

const [nodeModules, chromePath, categories, chromeFlags] = process.argv.slice(2);
// The tools are in the environment's node_modules, not beside this file: imported by their paths.
const load = (name, entry) => import(pathToFileURL(path.join(nodeModules, name, entry)).href);
const {default: lighthouse} = await load('lighthouse', 'core/index.js');
const chromeLauncher = await load('chrome-launcher', 'dist/index.js');

const chrome = await chromeLauncher.launch({chromePath, chromeFlags: JSON.parse(chromeFlags), handleSIGINT: false});
const stop = () => {
  chrome.kill();
  process.exit(1);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

const answer = (value) => process.stdout.write(JSON.stringify(value) + '\n');
for await (const line of readline.createInterface({input: process.stdin})) {
  const {url, output, slowdown} = JSON.parse(line);
  try {
    const result = await lighthouse(url, {
      port: chrome.port,
      output: 'json',
      onlyCategories: categories.split(','),
      disableFullPageScreenshot: true,
      throttling: {cpuSlowdownMultiplier: slowdown},
      logLevel: 'error',
    });
    fs.writeFileSync(output, result.report);
    answer({ok: true});
  } catch (error) {
    answer({ok: false, error: String(error?.message ?? error).split('\n')[0]});
  }
}
chrome.kill();
