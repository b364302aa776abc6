import should from 'should';
import { expectError, helper, loadWithSandbox, testSettings, useSandbox } from '../support/harness';

/**
 * Where the built-in sandbox cannot run (issue 52): with no node routes (httpNodeRoot false) or behind
 * httpNodeAuth, whose password Node-RED keeps hashed, every node on such a config node fails with
 * CONFIG_INVALID saying why, in its status at once and for each message, and nothing is sent.
 */

describe('svc-config on the built-in sandbox where it cannot run', function () {
  // The suite's sandbox is not used: the config node is on the built-in one.
  const ctx = useSandbox();

  for (const { settings, named } of [
    { settings: { httpNodeRoot: false }, named: /httpNodeRoot is false/ },
    {
      settings: { httpNodeAuth: { user: 'u', pass: '$2a$08$zZWtXTja0fB1pzD4sHCMyOCMYz2Z6dNbM6tl8sJogENOMcxWV9DN.' } },
      named: /httpNodeAuth protects the node routes/,
    },
  ]) {
    it(`fails with CONFIG_INVALID naming why (${Object.keys(settings)[0]})`, async function () {
      testSettings(settings);
      await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode' }], config: { version: 3, platform: 'sandbox' } });
      const { error } = await expectError('n1', { payload: '1 Main Street' });
      should(error.code).equal('CONFIG_INVALID');
      should(error.message)
        .match(/the built-in sandbox cannot run in this Node-RED/)
        .and.match(named);
      const statuses = (helper.getNode('n1').status as unknown as { args: Array<[{ text?: string }]> }).args.map(([status]) => status.text ?? '');
      should(statuses.some((text) => /^CONFIG_INVALID: the built-in sandbox cannot run/.test(text))).be.true(statuses.join(' | '));
    });
  }
});
