import type { EditorDefinition } from '../lib/node-red/editor-definition';
import { credentials, defaults } from './defaults';

/** The editor of svc-config: build/editor-html.ts writes it into svc-config.html. */
const editor: EditorDefinition<EditorNode, SvcRow, SvcForm, typeof defaults, typeof credentials> = {
  category: 'config',
  label: function (this: EditorNode) {
    // A sandbox config reads "built-in sandbox" unless named: never mistaken for the platform.
    const sandbox = this.platform === 'sandbox' ? this._('svc-config.sandboxLabel') : '';
    const named = [this.name, sandbox, this.projectId, this.baseUrl].find((text) => typeof text === 'string' && text !== '');
    return typeof named === 'string' ? named : 'svc-config';
  },
  defaults,
  credentials,
  rows: [
    // The built-in sandbox needs nothing typed: the account's addresses and credentials show for 'account' only.
    { select: 'platform', icon: 'cloud', options: ['sandbox', 'account'] },
    { text: 'name', icon: 'tag', placeholder: 'placeholder.name' },
    // Test connection sits above the tabs, where the dialog opens, whichever tab shows.
    {
      html:
        // The result and its details wrap in a column of their own, right of the labels.
        '<div class="form-row" style="display: flex; align-items: baseline;"><label style="flex: none;">&nbsp;</label>' +
        '<div id="svc-config-test-column" style="flex: 1; min-width: 0;">' +
        '<button type="button" class="red-ui-button" id="svc-config-test"><i class="fa fa-plug"></i> <span data-i18n="svc-config.test.button"></span></button>' +
        '<span id="svc-config-test-result" style="margin-left: 8px;"></span>' +
        '<div id="svc-config-test-details" style="margin-top: 4px;"></div></div></div>',
    },
    // Grouped as Node-RED's MQTT broker dialog is: one tab per kind of setting.
    { tab: 'connection' },
    { text: 'baseUrl', icon: 'globe', example: 'https://api.example.com', when: { platform: ['account'] } },
    { text: 'authUrl', icon: 'key', example: 'https://auth.example.com', when: { platform: ['account'] } },
    { text: 'sandboxUrl', icon: 'th', placeholder: 'placeholder.sandboxUrl', when: { platform: ['account'] } },
    { text: 'audience', icon: 'bullseye', when: { platform: ['account'] } },
    { text: 'projectId', icon: 'folder-o', when: { platform: ['account'] } },
    { tab: 'credentials' },
    { text: 'clientId', icon: 'user', when: { platform: ['account'] } },
    { password: 'clientSecret', icon: 'lock', when: { platform: ['account'] } },
    { password: 'apiKey', icon: 'lock', when: { platform: ['account'] } },
    { password: 'pubsubApiKey', icon: 'lock', when: { platform: ['account'] } },
    { tab: 'limits' },
    // Which rate limit applies to which node: docs/configuration.md "Rate limits", and the help.
    { select: 'rateScope', icon: 'sliders', options: ['family', 'all'] },
    { number: 'rateLimit', icon: 'tachometer', min: 0, unit: 'unit.perMinute' },
    { number: 'rateWords', icon: 'th', min: 0, unit: 'unit.perMinute', example: '0', when: { rateScope: ['family'] } },
    { number: 'rateRouting', icon: 'road', min: 0, unit: 'unit.perMinute', example: '0', when: { rateScope: ['family'] } },
    { number: 'rateBulk', icon: 'files-o', min: 0, unit: 'unit.perMinute', example: '0', when: { rateScope: ['family'] } },
    { number: 'rateTopics', icon: 'rss', min: 0, unit: 'unit.perMinute', example: '0', when: { rateScope: ['family'] } },
    { number: 'maxConcurrency', icon: 'random', min: 0 },
    { number: 'maxQueue', icon: 'list-ol', min: 0 },
    { number: 'maxRetries', icon: 'repeat', min: 0 },
    { number: 'dailyLimit', icon: 'calendar-check-o', min: 0, unit: 'unit.perDay' },
    // Node-RED gives a new config node no default that is 0: the placeholder shows it.
    { number: 'cacheTtl', icon: 'archive', min: 0, unit: 'unit.secondsOff', example: '0' },
    { tab: 'advanced' },
    { number: 'timeout', icon: 'clock-o', min: 1, unit: 'unit.milliseconds' },
    { number: 'tokenLifetime', icon: 'hourglass-half', min: 1, unit: 'unit.seconds' },
    { number: 'maxResponseSize', icon: 'compress', min: 0.01, step: 'any', unit: 'unit.megabytes' },
    { number: 'maxFileSize', icon: 'file-o', min: 0.01, step: 'any', unit: 'unit.megabytes' },
    { number: 'drainSeconds', icon: 'hourglass-end', min: 0, unit: 'unit.drainSeconds' },
    { config: 'tls', icon: 'shield' },
    { config: 'proxy', icon: 'exchange' },
    { password: 'redisUrl', icon: 'database', placeholder: 'placeholder.redisUrl' },
  ],
  prepare: function (this: EditorNode) {
    // TLS and Proxy are optional: with none chosen they read "none", not Node-RED's "Add new …" (the button beside adds one).
    ['tls', 'proxy'].forEach((name) => {
      const select = $('#node-config-input-' + name);
      const readNone = () => {
        select.find('option[value="_ADD_"]').text(this._('svc-config.placeholder.none'));
      };
      select.on('change', readNone);
      readNone();
    });
    $('#svc-config-test').on('click', () => {
      const result = $('#svc-config-test-result');
      const details = $('#svc-config-test-details').empty();
      const field = function (name: string) {
        return $('#node-config-input-' + name).val();
      };
      // A config selector holds _ADD_ when nothing is chosen.
      const configNode = function (name: string) {
        const id = field(name);
        return id === '_ADD_' ? '' : id;
      };
      result.text(this._('svc-config.test.running')).css('color', '');
      $.ajax({
        url: 'svc-config/test',
        type: 'POST',
        contentType: 'application/json',
        data: JSON.stringify({
          id: this.id,
          platform: field('platform'),
          authUrl: field('authUrl'),
          baseUrl: field('baseUrl'),
          audience: field('audience'),
          projectId: field('projectId'),
          tls: configNode('tls'),
          proxy: configNode('proxy'),
          credentials: {
            clientId: field('clientId'),
            clientSecret: field('clientSecret'),
            apiKey: field('apiKey'),
            pubsubApiKey: field('pubsubApiKey'),
            redisUrl: field('redisUrl'),
          },
        }),
      })
        .done((response: SvcTestResponse) => {
          // One line for all ("token ✓ · API key ✗ 401 · topics key not set"), then what to do about each that did not pass.
          result.text(response.message).css('color', response.ok ? 'var(--red-ui-text-color-success, green)' : 'var(--red-ui-text-color-error, #c00)');
          (response.checks || []).forEach((check) => {
            if (check.outcome === 'refused' || check.outcome === 'failed' || check.outcome === 'retype') {
              $('<div>')
                .addClass('svc-config-test-detail')
                .text(this._('svc-config.test.detail', { credential: this._('svc-config.test.' + check.credential), message: check.message }))
                .appendTo(details);
            }
          });
        })
        .fail((xhr: { status: number; statusText: string }) => {
          result.text(this._('svc-config.test.failed', { code: xhr.status, message: xhr.statusText })).css('color', 'var(--red-ui-text-color-error, #c00)');
        });
    });
  },
};

export default editor;
