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
        /** Node properties: the two settings in seconds, and the legacy first wait kept until the dialog is saved. */
        defaults: function (pollIntervalSec, maxWaitSec) {
            return {
                pollIntervalSec: {
                    value: pollIntervalSec,
                    // A node from a flow saved before 1.1 has only the legacy value until its dialog is saved.
                    validate: function (v) {
                        var empty = v === undefined || v === null || v === '';
                        return empty ? POSITIVE.test(String(this.pollInterval)) : POSITIVE.test(String(v));
                    }
                },
                maxWait: { value: maxWaitSec, required: true, validate: RED.validators.regex(POSITIVE) },
                pollInterval: { value: '' }
            };
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
