import should from 'should';
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { type ClientOptions, type RedisDeployment, redisDeployment } from '../../../nodes/lib/state/redis-deployment';
import { SECRET_CHARACTERS, passwordWith, secretParts } from '../../support/redis-url-secrets';

/** The options a deployment's client was made with, read from ioredis without connecting. */
function clientOptions(deployment: RedisDeployment): Record<string, unknown> {
  const options: ClientOptions = { retryStrategy: () => null, enableOfflineQueue: false, lazyConnect: true };
  const client = deployment.connect(options);
  try {
    return deployment.kind === 'cluster'
      ? ((client as Cluster).options.redisOptions as Record<string, unknown>)
      : ((client as Redis).options as unknown as Record<string, unknown>);
  } finally {
    client.disconnect();
  }
}

/** The text of the ConfigError `url` is refused with, in English. */
function refusal(url: string): string {
  try {
    redisDeployment(url);
  } catch (err) {
    should(err).have.property('code', 'CONFIG_INVALID');
    return (err as Error).message;
  }
  throw new Error(`${url} was accepted`);
}

describe('the Redis URL (issue 51 point 1)', function () {
  describe('an error names the part that is wrong by its place, never what the user typed after the scheme', function () {
    // Each password holds the marker PART; written without the encoding it needs, it spills into another part.
    const cases: Array<[string, RegExp]> = [
      ['redis-sentinel://:pre@PART@127.0.0.1:26379,127.0.0.1:nope/mymaster', /^host 2 of the Redis URL is not host:port/],
      ['redis-sentinel://:pre/PART@127.0.0.1:26379/mymaster', /has an @ in its path/],
      ['redis-sentinel://:pre?PART@127.0.0.1:26379/mymaster', /^host 1 of the Redis URL is not host:port/],
      ['redis-sentinel://pre:1?PART@127.0.0.1:26379/mymaster', /names no master/],
      ['redis://pre:1?PART@127.0.0.1:6379', /takes no query parameters/],
      ['redis-sentinel://:pre#PART@127.0.0.1:26379/mymaster', /holds a #/],
      ['redis-sentinel://127.0.0.1:26379/mymaster?sentinelPassword=s3nt&PART', /^query parameter 2 of the Redis Sentinel URL is not one it takes/],
      ['redis-sentinel://127.0.0.1:26379/mymaster?sentinelPassword=s3nt&PART=x&db=1', /^query parameter 2 of/],
      [
        'redis-sentinel://127.0.0.1:26379/mymaster?sentinelPassword=s3nt%PART',
        /^the sentinelPassword parameter in the Redis URL is not valid percent-encoding/,
      ],
      ['redis-sentinel://127.0.0.1:26379/mymaster?db=PART', /^the db parameter of the Redis Sentinel URL is not a database number/],
      ['redis-sentinel://127.0.0.1:26379/mymaster?sentinelPassword=a&sentinelPassword=PART', /gives the parameter sentinelPassword twice/],
      ['redis-sentinel://:pre,PART@:26379/mymaster', /^host 1 of the Redis URL/],
      ['redis-sentinel://:preP%ART@127.0.0.1/mymaster', /^the password in the Redis URL is not valid percent-encoding/],
      ['redis-sentinel://us%PART:x@127.0.0.1/mymaster', /^the user name in the Redis URL/],
      ['redis-sentinel://127.0.0.1/my%PART', /^the master name in the Redis URL/],
      ['redis-sentinel://:pre:PART@127.0.0.1:26379', /names no master/],
      ['redis://:pre/PART@127.0.0.1:6379', /has an @ in its path/],
      ['redis://pre:12/PART@127.0.0.1:6379', /has an @ in its path/],
      ['redis://pre:PART/x@127.0.0.1:6379', /has an @ in its path/],
      ['redis://pre:PART 1@127.0.0.1 6379', /^host 1 of the Redis URL is not host:port \(give redis:\/\/host:port\)/],
      ['redis://:pre%PART@127.0.0.1:6379', /^the password in the Redis URL is not valid percent-encoding: write % as %25/],
      ['redis://:pre@127.0.0.1:6379/PART', /^the path of the Redis URL is not a database number/],
      ['redis://:pre@127.0.0.1:6379?password=PART', /^a redis:\/\/ URL takes no query parameters/],
      ['rediss://:pre,PART@127.0.0.1:6379,127.0.0.1:6380', /^a redis:\/\/ URL names one server/],
      ['redis-cluster://:pre@127.0.0.1:7000,PART:x', /^host 2 of the Redis URL is not host:port \(give redis-cluster:\/\/host:port,host:port…\)/],
      ['redis-cluster://:pre@127.0.0.1:7000/PART', /takes no path or parameters/],
      ['redis-cluster://:pre@127.0.0.1:7000?PART', /takes no path or parameters/],
      ['rediss-cluster://:pre/PART@127.0.0.1:7000', /has an @ in its path/],
      [':prePART@127.0.0.1:6379', /^the Redis URL is not a URL/],
      ['prePART@127.0.0.1:6379', /^the Redis URL is not a URL/],
      ['redis:/:prePART@127.0.0.1', /^the Redis URL is not a URL/],
      ['http://:prePART@127.0.0.1', /must start with redis:\/\/.* not http:\/\/$/],
    ];
    for (const [url, expected] of cases) {
      it(url, function () {
        const text = refusal(url);
        should(text).match(expected);
        should(text).not.match(/PART|pre|s3nt|27\.0/);
      });
    }
  });

  describe('a password holding any character, percent-encoded, reaches ioredis as it is, and is a secret to mask', function () {
    for (const char of SECRET_CHARACTERS) {
      const password = passwordWith(char);
      const written = encodeURIComponent(password);
      it(`${JSON.stringify(char)}: in the user information of every form and in sentinelPassword`, function () {
        const forms: Array<[string, string]> = [
          ['redis', `redis://app:${written}@127.0.0.1:6379/2`],
          ['rediss', `rediss://:${written}@[::1]:6380`],
          ['redis-sentinel', `redis-sentinel://app:${written}@127.0.0.1:26379,127.0.0.1:26380,127.0.0.1/mymaster?db=1`],
          ['rediss-sentinel', `rediss-sentinel://:${written}@127.0.0.1:26379/mymaster`],
          ['redis-cluster', `redis-cluster://app:${written}@127.0.0.1:7000,127.0.0.1:7001`],
          ['rediss-cluster', `rediss-cluster://:${written}@127.0.0.1:7000`],
        ];
        for (const [form, url] of forms) {
          const deployment = redisDeployment(url);
          should(clientOptions(deployment).password).equal(password, form);
          should(deployment.secrets).containEql(password);
          for (const part of secretParts(password)) should(deployment.address).not.containEql(part);
        }
        const sentinel = redisDeployment(`redis-sentinel://127.0.0.1:26379/mymaster?sentinelUsername=s&sentinelPassword=${written}&db=3`);
        should(clientOptions(sentinel)).have.properties({ sentinelPassword: password, sentinelUsername: 's', db: 3, name: 'mymaster' });
        should(sentinel.secrets).containEql(password);
      });
    }

    it('`@ : , & +` need no encoding in the user information, nor `@ : / , ? = +` in a parameter; `+` is a plus sign, `%XX` always a percent-escape', function () {
      const raw = 'a@b:c,d&e+f';
      for (const url of [`redis://:${raw}@127.0.0.1:6379`, `redis-sentinel://:${raw}@127.0.0.1/m`, `redis-cluster://:${raw}@127.0.0.1:7000`]) {
        should(clientOptions(redisDeployment(url)).password).equal(raw, url);
      }
      should(clientOptions(redisDeployment('redis-sentinel://127.0.0.1/m?sentinelPassword=a+b%2Bc%20d')).sentinelPassword).equal('a+b+c d');
      should(clientOptions(redisDeployment('redis-sentinel://127.0.0.1/m?sentinelPassword=a@b:c/d,e?f=g+ü')).sentinelPassword).equal('a@b:c/d,e?f=g+ü');
      should(clientOptions(redisDeployment('redis://:100%25%41@127.0.0.1')).password).equal('100%A');
    });

    it('shows each form without credentials', function () {
      should(redisDeployment('redis://:pw@127.0.0.1').address).equal('redis://127.0.0.1');
      should(redisDeployment('REDISS://:pw@[::1]:6380/4').address).equal('rediss://[::1]:6380');
      should(redisDeployment('redis-sentinel://:pw@h1,[::1]:26380/my%20master?sentinelPassword=x').address).equal(
        'redis-sentinel://h1:26379,[::1]:26380/my%20master',
      );
      should(redisDeployment('rediss-cluster://:pw@h1:7000,h2').address).equal('rediss-cluster://h1:7000,h2:6379');
    });
  });
});
