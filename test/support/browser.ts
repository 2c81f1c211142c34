import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';

/**
 * Tests in a real browser: Debian's Chromium driven by playwright-core.
 * Without Chromium a browser suite is skipped, loudly; under CI (CI=true)
 * it fails instead, since .ci/run installs Chromium.
 */
export const CHROMIUM = findChromium();
const IN_CI = Boolean(process.env.CI) && process.env.CI !== 'false' && process.env.CI !== '0';

/** `describe` when Chromium is there; otherwise a failing suite in CI, a skipped one (said on stderr) elsewhere. */
export function describeInBrowser(name: string, file: string, body: (chromiumPath: string) => void): void {
  if (CHROMIUM) {
    describe(name, () => body(CHROMIUM));
  } else if (IN_CI) {
    describe(name, () => {
      it('needs Chromium, which CI must have installed', () => {
        throw new Error(
          'No Chromium found (CHROMIUM_PATH, or chromium / chromium-browser on PATH): .ci/run installs Debian\'s "chromium".',
        );
      });
    });
  } else {
    process.stderr.write(
      `\n*** ${file} SKIPPED: no Chromium found (set CHROMIUM_PATH, or \`apt-get install -y chromium\`). ` +
        `${name} is NOT tested in a browser. ***\n\n`,
    );
    describe.skip(`${name} (SKIPPED: no Chromium installed)`, () => {
      it('runs', () => undefined);
    });
  }
}

function findChromium(): string | null {
  const candidates = process.env.CHROMIUM_PATH
    ? [process.env.CHROMIUM_PATH]
    : (process.env.PATH ?? '').split(path.delimiter).flatMap((dir) => [path.join(dir, 'chromium'), path.join(dir, 'chromium-browser')]);
  return (
    candidates.find((file) => {
      try {
        fs.accessSync(file, fs.constants.X_OK);
        return fs.statSync(file).isFile();
      } catch {
        return false;
      }
    }) ?? null
  );
}

/**
 * Collects what must never happen on a page: script errors, console errors
 * (a refused Content-Security-Policy rule is one), and requests to any
 * origin but the server's. `expected` passes console lines a test provokes.
 */
export function watchPage(
  page: Page,
  origin: string,
  problems: string[],
  expected: (text: string, url: string) => boolean = () => false,
): void {
  page.on('console', (m) => {
    if (m.type() === 'error' && !expected(m.text(), m.location().url)) problems.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith(`${origin}/`) && !/^(data|blob):/.test(r.url())) problems.push(`request outside the server: ${r.url()}`);
  });
}

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's checks (WCAG 2.1 A and AA) on the page as it is: the serious
 * and critical violations, as lines naming the rule and the elements. The
 * engine is evaluated through the DevTools protocol, which the page's
 * Content-Security-Policy does not govern.
 */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then((r) => r.violations)",
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

const ARTIFACTS = path.join(__dirname, '..', '..', '.tmp', 'screenshots');
const DOCS_SCREENSHOTS = path.join(__dirname, '..', '..', 'docs', 'screenshots');

/** The screens docs/ shows (README.md, docs/architecture/web-client.md). */
const DOCS_SCREENS = new Set(['channel', 'dark', 'phone', 'compose-suggestions', 'views-settings', 'views-user-card']);

/**
 * A screenshot of the page, kept as a test artifact (.tmp/screenshots/);
 * with UPDATE_SCREENSHOTS=1, for a screen docs/ shows, also its copy there
 * (docs/screenshots/).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file });
  if (process.env.UPDATE_SCREENSHOTS === '1' && DOCS_SCREENS.has(name)) {
    fs.mkdirSync(DOCS_SCREENSHOTS, { recursive: true });
    fs.copyFileSync(file, path.join(DOCS_SCREENSHOTS, `${name}.png`));
  }
}
