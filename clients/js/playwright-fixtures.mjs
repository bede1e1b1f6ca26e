// credemu for Playwright Test (@playwright/test): the suite's own `context` fixture, and every fixture made from it
// (`page`), comes with credemu installed, so `context.credentials` is a credemu profile of the pack the suite
// chooses (credemu.mjs's credentials()). No dependency: the fixtures are plain objects for `test.extend`.
//
//   import { test as base, expect } from '@playwright/test';
//   import { extendWithCredemu } from 'credemu/playwright-test';
//   export const test = extendWithCredemu(base, { pack: 'gpm' });
//   test.use({ credemuOptions: { pack: 'apple' } });   // per file or describe block
//
// A storage state given to the context (`test.use({ storageState })`) that carries `credentials` seeds the
// profile with them, and `context.storageState({ credentials: true })` saves the profile's.
import { credentials } from './credemu.mjs';

/**
 * The fixtures for `test.extend`: `credemuOptions` (an option: credentials()'s options, `pack`, `platform`,
 * `server`, ...; default `options`), `launchOptions` (the suite's, with a DevTools port for Chromium), `context`
 * (the base context, credemu installed in it before the test uses it) and `credemu` (the context's Credentials:
 * its `client` and `profile`, for the profile's events and findings).
 */
export function credemuFixtures(options = {}) {
  return {
    credemuOptions: [options, { option: true }],
    // Chromium gets a DevTools port (Chromium picks it), so credemu serve answers the pages itself rather than
    // through Playwright's binding and this process (credemu.mjs's Pairing); a port the suite names is kept.
    launchOptions: [async ({ launchOptions, browserName }, use) => {
      const args = launchOptions?.args ?? [];
      await use(browserName !== 'chromium' || args.some((a) => String(a).startsWith('--remote-debugging-port'))
        ? launchOptions : { ...launchOptions, args: [...args, '--remote-debugging-port=0'] });
    }, { scope: 'worker' }],
    context: async ({ context, credemuOptions }, use) => {
      await credentials(context, credemuOptions).install();
      await use(context);
    },
    credemu: async ({ context }, use) => {
      await use(context.credentials);
    },
  };
}

/** The fixtures with credentials()'s defaults (pack webauthn-spec, the shared server): `base.extend(fixtures)`. */
export const fixtures = credemuFixtures();

/** `test.extend(credemuFixtures(options))`: a `test` whose `context` and `page` come with credemu installed. */
export function extendWithCredemu(test, options = {}) {
  return test.extend(credemuFixtures(options));
}
