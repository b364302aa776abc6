// @ts-check
/*
 * The editor side of every node of the pack, written once. Node-RED serves this file from the module's
 * resources/ folder and each node's .html loads it before its definition
 * (`<script src="resources/@svc/node-red-location/editor.js">`).
 *
 * A node describes its dialog as a table of rows. `SvcEditor.form(type, rows)` writes the dialog's
 * template from it, in Node-RED's own markup (form-row, a label with its icon, texts by data-i18n from
 * the node's catalog), so that Node-RED fills, validates and saves the inputs as for any node; then
 * `form.prepare(node)` in oneditprepare adds what markup cannot: TypedInputs (default source msg, set
 * to the matching msg member by the node's defaults), spinners, rows shown for one choice only, and the
 * node's settings migrations (its folder's migrations.ts, which the build ships into its .html). Each node's
 * .html is written by the build from the node's editor definition (nodes/<type>/editor.ts, see
 * build/editor-html.ts), with the defaults inline in registerType, where the Flow Library and the
 * scorecard read them statically; the validators they name are here.
 *
 * A row is an object whose kind names the property it edits (the input is node-input-<property>):
 *   { typed: 'address', types: ['str', 'jsonata'] }   TypedInput: the sources, then these types;
 *       fixed: ['a', 'b'] (multiple: true) or { value, label, options, optionLabels } puts choices first
 *   { text | password | config: 'p' }                  a text or password input; config: a config-node selector
 *   { spinner: 'p', min, max, step }  { number: 'p', min, step }   a spinner, or an HTML number input
 *   { select: 'p', options: ['a', 'b'] }              labels from <type>.<p>.<option>
 *   { checkbox: 'p', caption }                         caption right of the box (default label.<p>)
 *   { tip: 'key', icon, warning }  { hidden: 'p' }  { html: '<div class="form-row">…</div>' }
 *   { tab: 'name' }   the rows after it, up to the next tab, are one tab of the dialog (label tabs.<name>), as in
 *       Node-RED's MQTT broker dialog; rows before the first tab stay above the tabs
 *   'server', 'name', 'mapOutput', { poll: true, units }   rows several dialogs share
 * and may have: icon (Font Awesome, without fa-), label (default label.<p>), placeholder (a key) or
 * example (a literal placeholder), unit (a key, shown after the input), and when: { control: [values] },
 * to show the row only while that select, checkbox or fixed TypedInput choice holds one of the values.
 * Keys are in the node's catalog (`label.origins` is <type>.label.origins) unless they name a namespace.
 * Every dialog has a hidden `version` input: the node's settings version, which its `version` default sets.
 * Types: types/editor-globals.d.ts (SvcRow, SvcForm); `npm run lint` checks this file with tsc.
 */
(function () {
    'use strict';
    if (window.SvcEditor) {
        return;
    }
    /** Where a TypedInput may read its value at run time; msg first, the default. */
    var SOURCES = ['msg', 'flow', 'global', 'env'];
    /** The Map output texts are in the svc-config catalog, the one catalog every flow of the pack has. */
    var MAP_TEXT = '@svc/node-red-location/svc-config:svc-config.mapOutput.';
    var MEMBER_PATH = /^([A-Za-z_$][\w$-]*(\.[\w$-]+)*)?$/;
    var WHOLE_NUMBER = /^[1-9][0-9]*$/;
    var CHECKBOX_STYLE = 'display: inline-block; width: auto; vertical-align: top;';
    /** Where a tab starts in a dialog's markup while it is written (see `form`). */
    var TAB_MARK = '<!-- svc-tab -->';

    /**
     * Rows that several dialogs have, by name.
     * @type {Record<string, SvcRow[]>}
     */
    var NAMED_ROWS = {
        server: [{ config: 'server', icon: 'globe' }],
        name: [{ text: 'name', icon: 'tag', placeholder: 'label.name' }],
        // An option of the locating nodes, like node-red-node-geofence's "worldmap" checkbox: a second
        // output with ready-to-draw worldmap messages. `outputs` is a default, so Node-RED rewires the ports on save.
        mapOutput: [
            { checkbox: 'worldmap', icon: 'map-o', label: MAP_TEXT + 'label', caption: MAP_TEXT + 'checkbox' },
            { text: 'worldmapLayer', icon: 'clone', label: MAP_TEXT + 'layer', placeholder: MAP_TEXT + 'layerPlaceholder', when: { worldmap: [true] } },
            {
                spinner: 'worldmapTtl',
                icon: 'hourglass-half',
                label: MAP_TEXT + 'ttl',
                placeholder: MAP_TEXT + 'ttlPlaceholder',
                unit: MAP_TEXT + 'seconds',
                min: 1,
                when: { worldmap: [true] }
            },
            { checkbox: 'worldmapClear', icon: 'eraser', label: MAP_TEXT + 'clear', caption: MAP_TEXT + 'clearCaption', when: { worldmap: [true] } },
            { hidden: 'outputs' }
        ]
    };

    /**
     * The poll settings of the job nodes, both in seconds. A flow written by 1.0.0 may hold the first
     * wait as `pollInterval`, in the node's old unit: the node's migration moves it into the seconds
     * field when the dialog opens, and the hidden input lets saving clear it.
     * @param {SvcRow} row
     * @returns {SvcRow[]}
     */
    function pollRows(row) {
        var units = row.units || ['label.seconds', 'label.seconds'];
        return [
            { spinner: 'pollIntervalSec', icon: 'clock-o', label: 'label.pollInterval', unit: units[0], min: 0.05, step: 0.5 },
            { hidden: 'pollInterval' },
            { spinner: 'maxWait', icon: 'hourglass-end', unit: units[1], min: 1 }
        ];
    }

    /**
     * @param {Array<SvcRow | string>} rows
     * @returns {SvcRow[]}
     */
    function expand(rows) {
        return rows.reduce(function (/** @type {SvcRow[]} */ all, row) {
            var more = typeof row === 'string' ? NAMED_ROWS[row] : row.poll ? pollRows(row) : [row];
            if (!more) {
                throw new Error('SvcEditor: no row named ' + row);
            }
            return all.concat(more);
        }, []);
    }

    /** @param {unknown} text */
    function escape(text) {
        return String(text).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
    }

    /**
     * The property a row edits (each kind names it under its own key); '' for a tip or markup.
     * @param {SvcRow} row
     * @returns {string}
     */
    function fieldOf(row) {
        return row.config || row.text || row.password || row.typed || row.spinner || row.number || row.select || row.checkbox || row.hidden || '';
    }

    /**
     * A positive number, as the runtime's setting parser reads one.
     * @param {unknown} v
     */
    function positive(v) {
        var n = Number(v);
        return n > 0 && isFinite(n);
    }

    /**
     * Shows or hides the rows that depend on a control (row.when: { control: [values] }).
     * @param {SvcForm} form
     * @param {EditorQuery} dialog
     * @param {string} control
     */
    function showDependentRows(form, dialog, control) {
        var input = $('#' + form.id(control));
        /** @type {unknown} */
        var value;
        var fromSource = false;
        if (input.is(':checkbox')) {
            value = input.is(':checked');
        } else if (input.data('noderedTypedInput') !== undefined) {
            // A value read from the message at run time may be any choice: every dependent row applies.
            fromSource = SOURCES.indexOf(input.typedInput('type')) >= 0;
            value = input.typedInput('value');
        } else {
            value = input.val();
        }
        form.rows.forEach(function (row, index) {
            if (row.when && row.when[control]) {
                dialog.find('.svc-row-' + index).toggle(fromSource || row.when[control].indexOf(value) >= 0);
            }
        });
    }

    /**
     * Writes the dialog template of `type` from its rows and returns the form: `prepare(node)` for
     * oneditprepare, `save()` for oneditsave, and `keys`, every catalog key the dialog uses.
     * `options.config`: the dialog of a config node (inputs named node-config-input-*);
     * `options.migrations`: the node's settings migrations (its folder's migrations.ts, shipped in its .html).
     * @param {string} type
     * @param {Array<SvcRow | string>} rows
     * @param {{ config?: boolean, migrations: SvcMigrations }} options
     * @returns {SvcForm}
     */
    function form(type, rows, options) {
        var prefix = options.config ? 'node-config-input' : 'node-input';
        /** @type {string[]} */
        var keys = [];
        // prepare and save are set below, once the template is written.
        var self = /** @type {SvcForm} */ ({
            type: type,
            rows: expand(rows.concat([{ hidden: 'version' }])),
            keys: keys,
            tabs: /** @type {string[]} */ ([]),
            id: function (/** @type {string} */ field) {
                return prefix + '-' + field;
            }
        });

        /**
         * A catalog key of this node (a key with a namespace stands as it is); kept in `keys`.
         * @param {string} k
         */
        function key(k) {
            var full = k.indexOf(':') >= 0 ? k : type + '.' + k;
            if (keys.indexOf(full) < 0) {
                keys.push(full);
            }
            return full;
        }
        /**
         * @param {string} k
         * @param {string} [attribute]
         */
        function i18n(k, attribute) {
            return ' data-i18n="' + (attribute ? '[' + attribute + ']' : '') + escape(key(k)) + '"';
        }
        /**
         * @param {SvcRow} row
         * @param {string} field
         * @param {string} kind
         * @param {string} width
         */
        function input(row, field, kind, width) {
            var extra = row.placeholder ? i18n(row.placeholder, 'placeholder') : row.example ? ' placeholder="' + escape(row.example) + '"' : '';
            if (kind === 'number') {
                extra += ' min="' + row.min + '"' + (row.step ? ' step="' + row.step + '"' : '');
            }
            return '<input type="' + kind + '" id="' + self.id(field) + '" style="width: ' + width + ';"' + extra + '>';
        }
        /** @param {SvcRow} row */
        function unit(row) {
            return row.unit ? ' <span' + i18n(row.unit) + '></span>' : '';
        }
        /**
         * @param {SvcRow} row
         * @param {string} field
         */
        function label(row, field) {
            return (
                '<label for="' + self.id(field) + '"><i class="fa fa-' + row.icon + '"></i> <span' + i18n(row.label || 'label.' + field) + '></span></label>'
            );
        }
        /**
         * @param {SvcRow} row
         * @param {string} field
         */
        function content(row, field) {
            if (row.typed) {
                var width = row.unit ? '55%' : '70%';
                return label(row, field) + input(row, field, 'text', width) + '<input type="hidden" id="' + self.id(field + 'Type') + '">' + unit(row);
            }
            if (row.spinner || row.number) {
                return label(row, field) + input(row, field, row.number ? 'number' : 'text', row.number ? '120px' : '80px') + unit(row);
            }
            if (row.select) {
                var choices = (row.options || []).map(function (value) {
                    return '<option value="' + escape(value) + '"' + i18n(field + '.' + value) + '></option>';
                });
                return label(row, field) + '<select id="' + self.id(field) + '" style="width: 70%;">' + choices.join('') + '</select>';
            }
            if (row.checkbox) {
                var box = '<input type="checkbox" id="' + self.id(field) + '" style="' + CHECKBOX_STYLE + '">';
                var text = '<label for="' + self.id(field) + '" style="width: 70%;"' + i18n(row.caption || 'label.' + field) + '></label>';
                return (row.icon ? label(row, field) : '<label>&nbsp;</label>') + box + ' ' + text;
            }
            return label(row, field) + input(row, field, row.password ? 'password' : 'text', '70%');
        }
        /**
         * The tab rows' markers become Node-RED's tab strip and one panel per tab, as the MQTT broker dialog has them.
         * @param {string} rowsMarkup
         */
        function tabbed(rowsMarkup) {
            var panels = rowsMarkup.split(TAB_MARK);
            var above = panels.shift();
            return (
                above +
                '<div class="form-row"><ul style="min-width: 400px; margin-bottom: 20px;" id="' +
                type +
                '-tabs"></ul></div><div id="' +
                type +
                '-tabs-content" style="min-height: 150px;">' +
                panels
                    .map(
                        /**
                         * @param {string} panel
                         * @param {number} index
                         */
                        function (panel, index) {
                            return '<div id="' + type + '-tab-' + self.tabs[index] + '" style="display: none;">' + panel + '</div>';
                        }
                    )
                    .join('') +
                '</div>'
            );
        }
        /**
         * @param {SvcRow} row
         * @param {number} index
         */
        function markup(row, index) {
            var field = fieldOf(row);
            if (row.tab) {
                key('tabs.' + row.tab);
                return TAB_MARK;
            }
            var classes = row.when ? ' svc-row-' + index : '';
            if (row.html) {
                return row.html;
            }
            if (row.hidden) {
                return '<input type="hidden" id="' + self.id(field) + '">';
            }
            if (row.tip) {
                var tip = '<i class="fa fa-' + row.icon + '"></i> <span' + i18n(row.tip) + '></span>';
                var style = row.warning ? ' style="color: var(--red-ui-text-color-error, #c00);"' : '';
                return '<div class="form-tips' + classes + '"' + style + '>' + tip + '</div>';
            }
            return '<div class="form-row' + classes + '">' + content(row, field) + '</div>';
        }

        self.rows.forEach(function (row) {
            if (row.tab) {
                self.tabs.push(row.tab);
            }
        });
        var template = self.rows.map(markup).join('\n');
        if (self.tabs.length) {
            template = tabbed(template);
        }
        self.rows.forEach(function (row) {
            var fixed = row.typed && fixedType(row);
            if (fixed) {
                key(fixed.label);
                (fixed.optionLabels || []).forEach(key);
            }
            if (row.checkbox === 'worldmap') {
                key('outputs.result'); // port 1's label beside the Map output (SvcEditor.outputLabels)
            }
        });
        $('<script>').attr({ type: 'text/html', 'data-template-name': type }).text(template).appendTo('body');

        self.prepare = function (node) {
            writeMigrated(self, options.migrations, node);
            var dialog = $('#' + self.id('name')).closest('form');
            if (self.tabs.length) {
                var strip = RED.tabs.create({
                    id: type + '-tabs',
                    onchange: function (tab) {
                        $('#' + type + '-tabs-content')
                            .children()
                            .hide();
                        $('#' + tab.id).show();
                    }
                });
                self.tabs.forEach(
                    /** @param {string} name */
                    function (name) {
                        strip.addTab({ id: type + '-tab-' + name, label: node._(type + '.tabs.' + name) });
                    }
                );
            }
            self.rows.forEach(function (row) {
                var field = fieldOf(row);
                if (row.typed) {
                    var fixed = fixedType(row);
                    /** @type {TypedInputType[]} */
                    var types = fixed ? [typedChoice(node, fixed)] : [];
                    types = types.concat(SOURCES, row.types || []);
                    $('#' + self.id(field)).typedInput({ default: 'msg', types: types, typeField: '#' + self.id(field + 'Type') });
                } else if (row.spinner) {
                    $('#' + self.id(field)).spinner({ min: row.min, max: row.max, step: row.step });
                }
            });
            /** @type {string[]} */
            var controls = [];
            self.rows.forEach(function (row) {
                Object.keys(row.when || {}).forEach(function (control) {
                    if (controls.indexOf(control) < 0) {
                        controls.push(control);
                    }
                });
            });
            controls.forEach(function (control) {
                $('#' + self.id(control)).on('change', function () {
                    showDependentRows(self, dialog, control);
                });
                showDependentRows(self, dialog, control);
            });
        };

        /** Output 2 exists while the Map output option is on. */
        self.save = function () {
            var worldmap = $('#' + self.id('worldmap'));
            if (worldmap.length) {
                $('#' + self.id('outputs')).val(worldmap.is(':checked') ? 2 : 1);
            }
        };
        return self;
    }

    /**
     * The fixed choices of a TypedInput row, shown before the sources: `fixed: [values]` (labelled by
     * the value, `multiple` for several at once) or `fixed: { value, label, options, optionLabels }`.
     * @param {SvcRow} row
     * @returns {SvcFixedChoice | undefined}
     */
    function fixedType(row) {
        if (!row.fixed) {
            return undefined;
        }
        if (Array.isArray(row.fixed)) {
            return { value: 'fixed', label: 'label.fixed', options: row.fixed, multiple: !!row.multiple };
        }
        return row.fixed;
    }

    /**
     * @param {EditorNode} node
     * @param {SvcFixedChoice} fixed
     * @returns {TypedInputType}
     */
    function typedChoice(node, fixed) {
        var optionLabels = fixed.optionLabels;
        var options = fixed.options.map(function (value, index) {
            return optionLabels ? { value: value, label: node._(node.type + '.' + optionLabels[index]) } : value;
        });
        /** @type {TypedInputType} */
        var choice = { value: fixed.value, label: node._(node.type + '.' + fixed.label), icon: 'fa fa-list', options: options, multiple: !!fixed.multiple };
        if (fixed.multiple) {
            // The chosen options themselves ("car, truck"), not Node-RED's "2 selected".
            choice.valueLabel = function (container, chosen) {
                container.text(
                    chosen
                        .map(function (option) {
                            return typeof option === 'string' ? option : option.label || option.value;
                        })
                        .join(', ')
                );
            };
        }
        return choice;
    }

    /**
     * Writes into the dialog what the node's migrations (the table the runtime applies too) change, so
     * that saving the dialog stores the node at its current version.
     * @param {SvcForm} dialog
     * @param {SvcMigrations} migrations
     * @param {EditorNode} node
     */
    function writeMigrated(dialog, migrations, node) {
        var migrated = migrations.migrate(node);
        Object.keys(migrated).forEach(function (property) {
            var input = $('#' + dialog.id(property));
            var value = migrated[property];
            if (value === node[property] || !input.length) {
                return;
            }
            if (input.is(':checkbox')) {
                input.prop('checked', value === true);
            } else {
                input.val(value === undefined || value === null ? '' : String(value));
            }
        });
    }

    /**
     * An address the runtime accepts: http:// or https:// and a host (`api.example.com` alone is
     * refused) and a path, without a query, a fragment or user info; or ${NAME}, which Node-RED
     * replaces from the environment when the flow starts.
     * @param {boolean} required
     * @returns {SvcValidator}
     */
    function httpUrl(required) {
        return function (value, opt) {
            var text = value === undefined || value === null ? '' : String(value).trim();
            /** @type {string | undefined} */
            var problem;
            if (text === '') problem = required ? 'urlRequired' : undefined;
            else if (!/^(https?:\/\/[^\s/?#]+([/?#]\S*)?|\$\{\w+\})$/i.test(text)) problem = 'httpUrl';
            else if (/[?#]|^[a-z]+:\/\/[^/]*@/i.test(text)) problem = 'plainUrl';
            if (!problem) return true;
            // With `opt` Node-RED shows the returned text beside the field.
            return opt ? RED._('@svc/node-red-location/svc-config:svc-config.validation.' + problem) : false;
        };
    }

    window.SvcEditor = {
        form: form,

        /**
         * The label of a node: its name, else `fallback`.
         * @param {string} fallback
         * @returns {(this: EditorNode) => string}
         */
        nameOr: function (fallback) {
            return function () {
                return this.name || fallback;
            };
        },

        /**
         * labelStyle of every node: italic while the user has named it.
         * @this {EditorNode}
         */
        labelStyle: function () {
            return this.name ? 'node_label_italic' : '';
        },

        /**
         * onadd of the nodes that need a platform, and of svc-webhook-in (its optional shared state, and
         * on the built-in sandbox its webhook secret): a node added from the palette (or pasted) without one
         * takes the svc-config there is when there is exactly one it can use; with none or several the
         * user chooses, as in Node-RED's own dialogs.
         * @this {EditorNode}
         */
        pickOnlyConfig: function () {
            if (this.server) {
                return;
            }
            var z = this.z;
            /** @type {string[]} */
            var usable = [];
            RED.nodes.eachConfig(function (config) {
                // A config node inside a subflow serves only that subflow.
                if (config.type === 'svc-config' && !config.d && (!config.z || config.z === z)) {
                    usable.push(config.id);
                }
            });
            if (usable.length === 1) {
                this.server = usable[0];
            }
        },

        /**
         * outputLabels of the locating nodes: the node's result, then the Map output.
         * @this {EditorNode}
         * @param {number} index
         */
        outputLabels: function (index) {
            return index === 0 ? this._(this.type + '.outputs.result') : RED._(MAP_TEXT + 'port');
        },

        /** Validators of the defaults (`this` is the node). */
        validate: {
            positive: positive,
            /**
             * Empty (the runtime's default) or positive: settings added after nodes were saved without them.
             * @param {unknown} v
             */
            positiveOrEmpty: function (v) {
                return v === undefined || v === '' || positive(v);
            },
            /** @param {unknown} v */
            wholeNumber: function (v) {
                return WHOLE_NUMBER.test(String(v));
            },
            /**
             * A dotted member path such as `data.jobId`, or empty.
             * @param {unknown} v
             */
            memberPath: function (v) {
                return MEMBER_PATH.test(String(v === undefined ? '' : v));
            },
            /**
             * pollIntervalSec: a node from a flow written by 1.0.0 may have only the legacy pollInterval
             * until its dialog is saved (the runtime migrates it when the node starts).
             * @this {EditorNode}
             * @param {unknown} v
             */
            pollInterval: function (v) {
                var empty = v === undefined || v === null || v === '';
                return positive(empty ? this.pollInterval : v);
            },
            /**
             * A TypedInput's value checked with `test` only while its type (from the dialog, else the
             * node) is one of `types`: a value read at run time is checked there.
             * @param {string} typeProperty
             * @param {string[]} types
             * @param {(value: unknown) => boolean} test
             * @returns {SvcValidator}
             */
            typedAs: function (typeProperty, types, test) {
                return function (v) {
                    var type = $('#node-input-' + typeProperty).val() || this[typeProperty];
                    return types.indexOf(String(type)) < 0 || test(v);
                };
            },
            /**
             * svc-webhook-in's path: one fixed path the runtime serves (no route syntax), and not the path of another enabled
             * svc-webhook-in (compared as express routes them: case, a trailing slash and doubled
             * slashes aside). The runtime refuses the later of two at deploy; here the clash is
             * marked before, naming the other node and its tab.
             * @this {EditorNode}
             * @param {unknown} value
             * @param {unknown} [opt]
             */
            webhookPath: function (value, opt) {
                var text = value === undefined || value === null ? '' : String(value).trim();
                var catalog = '@svc/node-red-location/svc-webhook-in:svc-webhook-in.validation.';
                if (!/^\/?[^\s?#]+$/.test(text)) return opt ? RED._(catalog + 'path') : false;
                // One fixed path, as the runtime requires: a pattern would take requests meant for other routes.
                if (/[:*?+()[\]{}|^$\\!]/.test(text)) return opt ? RED._(catalog + 'pattern') : false;
                var routed = function (/** @type {string} */ path) {
                    return ('/' + path)
                        .replace(/\/{2,}/g, '/')
                        .replace(/(.)\/$/, '$1')
                        .toLowerCase();
                };
                var self = this;
                /** @type {EditorNode[]} */
                var clashes = [];
                RED.nodes.eachNode(function (other) {
                    if (clashes.length || other.id === self.id || other.type !== 'svc-webhook-in' || other.d) return;
                    if (routed(String(other.url || '')) === routed(text)) clashes.push(other);
                });
                var clash = clashes[0];
                if (!clash) return true;
                if (!opt) return false;
                var tab = RED.nodes.workspace(clash.z) || RED.nodes.subflow(clash.z);
                return RED._(catalog + 'pathInUse', {
                    name: RED.utils.getNodeLabel(clash, clash.id),
                    tab: tab ? tab.label || tab.name || tab.id : clash.z
                });
            },
            /**
             * svc-config's base URL: required on the platform 'account', anything on the built-in sandbox
             * (which ignores it). The Platform choice of the open dialog, else the node's.
             * @this {EditorNode}
             * @param {unknown} value
             * @param {unknown} [opt]
             */
            accountUrl: function (value, opt) {
                var platform = $('#node-config-input-platform').val() || this.platform;
                return platform === 'sandbox' || httpUrl(true).call(this, value, opt);
            },
            httpUrl: httpUrl
        }
    };
})();
