import should from 'should';
import { CREDENTIAL_NAMES, CREDENTIAL_NAME_PARTS, isCredentialName, redact } from '../../../nodes/lib/util/masking';

/**
 * Issue 32 point 2: one list of credential-like names. Texts (`redact`), svc-webhook-in's headers
 * (webhook_in_spec) and stored jobs (resumable_spec) all mask what the list names; the list is the
 * union of the three lists before it, so each place masks what any of them did.
 */
describe('the one list of credential-like names', function () {
  it('names a credential whole (auth, pass, pwd, jwt) or by a part, in any case, and nothing else', function () {
    for (const name of CREDENTIAL_NAMES) should(isCredentialName(name.toUpperCase())).be.true(name);
    for (const part of CREDENTIAL_NAME_PARTS) should(isCredentialName(`x-${part.toUpperCase()}-id`)).be.true(part);
    for (const name of ['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'accessToken', 'client_secret', 'sessionId', 'Private_Key']) {
      should(isCredentialName(name)).be.true(name);
    }
    for (const name of ['author', 'passenger', 'content-type', 'x-request-id', 'svc-signature', 'topic', 'keyword']) {
      should(isCredentialName(name)).be.false(name);
    }
  });

  it('masks in texts the values of names the text masking did not know before (cookies, sessions, passphrases …)', function () {
    const cases: Array<[string, string]> = [
      ['Cookie: sid=1', 'Cookie: ***'],
      ['set-cookie=abc', 'set-cookie=***'],
      ['{"sessionId":"s-1","name":"n"}', '{"sessionId":"***","name":"n"}'],
      ['{"passphrase":"open sesame"}', '{"passphrase":"***"}'],
      ['{"passwd":"p"}', '{"passwd":"***"}'],
      ['{"authorisation":"a"}', '{"authorisation":"***"}'],
      ['private_key=pk-1&x=2', 'private_key=***&x=2'],
      ['{"accessKey":"ak"}', '{"accessKey":"***"}'],
      ['{"credentials":"c"}', '{"credentials":"***"}'],
      ['{"bearerValue":"b"}', '{"bearerValue":"***"}'],
      ['{"auth":"u:p","author":"me"}', '{"auth":"***","author":"me"}'],
      ['pass=p1 pwd=p2 jwt=j1', 'pass=*** pwd=*** jwt=***'],
      // A credential word anywhere in the name, not only at its end.
      ['{"tokenValue":"t","passwordHash":"h","apiKeyId":"k"}', '{"tokenValue":"***","passwordHash":"***","apiKeyId":"***"}'],
    ];
    for (const [text, masked] of cases) should(redact(text)).equal(masked, text);
  });

  it('still masks what it masked before, and leaves other members alone', function () {
    should(redact('{"access_token":"abc","expires_in":3600}')).equal('{"access_token":"***","expires_in":3600}');
    should(redact('x-svc-api-key: k1, apikey=k2&q=1')).equal('x-svc-api-key: ***, apikey=***&q=1');
    should(redact('Authorization: Bearer abc.def')).equal('Authorization: *** ***');
    should(redact('{"client_secret":"unterminated')).equal('{"client_secret":"***"');
    should(redact('{"note":"password: abc"}')).equal('{"note":"password: ***"}');
    should(redact('Unexpected token } in JSON at position 5')).equal('Unexpected token } in JSON at position 5');
    should(redact('{"author":"me","topic":"t"}')).equal('{"author":"me","topic":"t"}');
  });
});
