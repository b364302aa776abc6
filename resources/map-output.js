/*
 * The Map output option of the six locating nodes' editors, in one place: its two dialog rows, the
 * port label of output 2, and the number of outputs it sets (like node-red-node-geofence's "worldmap"
 * checkbox). Its three defaults (worldmap, worldmapLayer, outputs) stand inline in each node's
 * definition, where tools that read defaults statically see them. Node-RED loads this file before the node
 * definitions of the pack (`<script src="resources/@svc/node-red-location/map-output.js">`).
 * Its texts are in the svc-config catalog, the one catalog every flow of the pack has.
 */
(function () {
    'use strict';
    if (window.SvcMapOutput) {
        return;
    }
    var CATALOG = '@svc/node-red-location/svc-config:svc-config.mapOutput.';

    function text(key) {
        return RED._(CATALOG + key);
    }

    window.SvcMapOutput = {
        /** The label of output 2. */
        portLabel: function () {
            return text('port');
        },

        /** Adds the option's rows above the Name row and fills them from the node. */
        prepare: function (node) {
            var checkboxRow = $('<div class="form-row"></div>')
                .append($('<label for="node-input-worldmap"></label>').append('<i class="fa fa-map-o"></i> ', $('<span></span>').text(text('label'))))
                .append('<input type="checkbox" id="node-input-worldmap" style="display: inline-block; width: auto; vertical-align: top;">')
                .append($('<label for="node-input-worldmap" style="width: 70%;"></label>').text(text('checkbox')));
            var layerRow = $('<div class="form-row" id="svc-map-output-layer-row"></div>')
                .append($('<label for="node-input-worldmapLayer"></label>').append('<i class="fa fa-clone"></i> ', $('<span></span>').text(text('layer'))))
                .append($('<input type="text" id="node-input-worldmapLayer" style="width: 70%;">').attr('placeholder', text('layerPlaceholder')));
            // Node-RED reads `outputs` from this input on save, and rewires the ports (as for the switch node).
            var outputs = $('<input type="hidden" id="node-input-outputs">').val(node.outputs || 1);
            $('#node-input-name').closest('.form-row').before(checkboxRow, layerRow.append(outputs));
            $('#node-input-worldmap')
                .prop('checked', node.worldmap === true)
                .on('change', function () {
                    layerRow.toggle(this.checked);
                })
                .trigger('change');
            $('#node-input-worldmapLayer').val(node.worldmapLayer || '');
        },

        /** Output 2 exists while the option is on. */
        save: function () {
            $('#node-input-outputs').val($('#node-input-worldmap').is(':checked') ? 2 : 1);
        }
    };
})();
