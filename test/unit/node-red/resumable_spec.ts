import should from 'should';
import { jsonSafeMembers } from '../../../nodes/lib/node-red/resumable';
import { CREDENTIAL_NAMES, CREDENTIAL_NAME_PARTS } from '../../../nodes/lib/util/masking';

/** Issue 32 point 2: a stored job's message leaves out the members the one list of credential-like names names, at any depth. */
describe('stored messages (jsonSafeMembers)', function () {
  it('leaves out every member named like a credential, at any depth, and keeps the rest', function () {
    const names = [...CREDENTIAL_NAMES, ...CREDENTIAL_NAME_PARTS.map((part) => `my-${part}`), 'proxy-authorization', 'x-svc-api-key', 'Cookie'];
    const credentials = Object.fromEntries(names.map((name) => [name, 'hidden']));
    const stored = jsonSafeMembers({ topic: 't', ...credentials, order: { id: 7, ...credentials, items: [{ ...credentials, sku: 'a' }] } });
    should(stored).eql({ topic: 't', order: { id: 7, items: [{ sku: 'a' }] } });
  });
});
