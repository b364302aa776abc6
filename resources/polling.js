/*
 * The poll settings of the job nodes' editors (bulk geocode, isoline, sequence), in one place.
 * Every poll setting is in seconds: `pollIntervalSec` and `maxWait`. A flow saved before 1.1 holds
 * the first wait as `pollInterval`, in milliseconds on bulk geocode and seconds on the others; the
 * runtime reads it in that unit while it is set, and opening the dialog moves it into the seconds
 * field (saving the dialog then clears it). Node-RED loads this file before the node definitions
 * (`<script src="resources/@svc/node-red-location/polling.js">`).
 */
(function () {
    'use strict';
    if (window.SvcPolling) {
        return;
    }
    var POSITIVE = /^(?=.*[1-9])[0-9]*\.?[0-9]+$/;

    window.SvcPolling = {
        /**
         * The validator of pollIntervalSec. A node from a flow saved before 1.1 has only the legacy
         * pollInterval until its dialog is saved. The defaults themselves stand inline in each node's
         * definition, where tools that read defaults statically see them.
         */
        validateInterval: function (v) {
            var empty = v === undefined || v === null || v === '';
            return empty ? POSITIVE.test(String(this.pollInterval)) : POSITIVE.test(String(v));
        },

        /** The validator of maxWait. */
        validateMaxWait: function (v) {
            return POSITIVE.test(String(v));
        },

        /**
         * Moves a legacy `pollInterval` (in `legacyUnitMs` per unit) into the seconds field and empties it,
         * so that saving the dialog stores seconds only. Call from oneditprepare.
         */
        prepare: function (legacyUnitMs) {
            var legacy = $('#node-input-pollInterval');
            var value = Number(legacy.val());
            if (legacy.val() !== '' && value > 0) {
                $('#node-input-pollIntervalSec').val(String((value * legacyUnitMs) / 1000));
            }
            legacy.val('');
        }
    };
})();
