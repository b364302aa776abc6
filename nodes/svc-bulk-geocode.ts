import type { NodeAPI, NodeDef, Node, OutputMessage } from './lib/node-red/inputs';
import { nodeInputs } from './lib/node-red/inputs';
import { clientFor } from './lib/node-red/config';
import { HandlerResult, InputContext, handleInputs } from './lib/node-red/runner';
import { isJsonValue, jobStoreFor } from './lib/node-red/resumable';
import type { JsonObject } from './lib/platform/job-store';
import { AddressSource, InputRow, addressRows, fileRows } from './lib/format/address-rows';
import { BULK_OUTPUT_MODES, BulkOutput, BulkOutputOptions } from './lib/node-red/bulk-output';
import type { BulkJobState, BulkProtocol } from './lib/platform/bulk';
import type { PlatformClient } from './lib/platform/client';
import { BulkRun } from './lib/platform/bulk-run';
import { countSetting, pollingOf, textSetting } from './lib/node-red/settings';
import { readChoice } from './lib/util/values';

interface BulkGeocodeDef extends NodeDef {
  server: string;
  addresses: string;
  addressesType: string;
  batchSize?: number | string;
  parallel?: number | string;
  pollIntervalSec?: number | string;
  /** Before 1.1: the first poll in milliseconds (see pollingOf). */
  pollInterval?: number | string;
  maxWait?: number | string;
  jobIdPath?: string;
  downloadPath?: string;
  statusPath?: string;
  rawFiles?: boolean;
  /** message (default), parts or file: see BulkOutput. */
  output?: string;
  outputFile?: string;
}

/** A run as stored for a restart: its batch size, every input row, the jobs uploaded so far, and the batches being uploaded. */
interface StoredRun {
  batchSize: number;
  rows: InputRow[];
  jobs: BulkJobState[];
  /**
   * Batches whose upload was sent and whose job id is not stored yet: after a crash each is uploaded
   * again (the platform has no idempotency key) and its report says so (`uploadedAgain`).
   */
  uploading?: number[];
}

/** A run as the job store takes it: rows and job states are plain JSON (each row's input checked by `isJsonValue`). */
function storedRun(run: StoredRun): JsonObject {
  return run as unknown as JsonObject;
}

const DEFAULTS = { batchSize: 1000, parallel: 2, polling: { pollIntervalSec: 2, maxWaitSec: 1800, legacyPollUnitMs: 1 } };

/**
 * svc-bulk-geocode: addresses (a list, CSV, JSON lines, a stream, or the file `msg.filename`) in
 * batches through the platform's bulk jobs (upload, poll, download), up to `parallel` jobs at once;
 * the rows in input order as one message, a message per job, or a file (see BulkOutput).
 */
export = function register(RED: NodeAPI): void {
  function SvcBulkGeocode(this: Node, def: BulkGeocodeDef): void {
    RED.nodes.createNode(this, def);
    const client = clientFor(RED, this, def.server, 'project');
    const inputs = nodeInputs(RED, this, def, { addresses: 'payload' });
    const batchSize = countSetting(def.batchSize, DEFAULTS.batchSize);
    const parallel = countSetting(def.parallel, DEFAULTS.parallel);
    const outputOptions: BulkOutputOptions = {
      mode: readChoice(def.output, BULK_OUTPUT_MODES, 'output') ?? 'message',
      batchSize,
      rawFiles: def.rawFiles === true,
      outputFile: textSetting(def.outputFile),
    };
    const protocol: BulkProtocol = {
      jobIdPath: textSetting(def.jobIdPath),
      downloadPath: textSetting(def.downloadPath),
      statusPath: textSetting(def.statusPath),
      polling: pollingOf(def, DEFAULTS.polling),
    };

    /**
     * Runs the rows through bulk jobs into the output message. `uploaded` are the jobs of an earlier
     * run (resumed); with `stored` rows, each new job is stored beside them so that the run resumes after a restart.
     */
    async function geocode(
      platform: PlatformClient,
      out: OutputMessage,
      source: AddressSource,
      context: InputContext,
      run: StoredRun | undefined,
    ): Promise<HandlerResult> {
      const output = await BulkOutput.open(out, outputOptions, context).catch((err: unknown) => {
        source.stream?.destroy();
        throw err;
      });
      // Stored before each upload is sent and as soon as its job id arrives: a crash can only repeat an upload under way.
      const uploadedBefore = run?.uploading?.slice() ?? [];
      const uploads = run
        ? {
            onUploadStart: async (batch: number) => {
              run.uploading = [...(run.uploading ?? []).filter((number) => number !== batch), batch];
              await context.track(storedRun(run));
            },
            onUpload: async (job: BulkJobState) => {
              run.jobs.push(job);
              run.uploading = (run.uploading ?? []).filter((number) => number !== job.batch);
              await context.track(storedRun(run));
            },
          }
        : {};
      const summary = await new BulkRun({
        client: platform,
        protocol,
        batchSize: run?.batchSize ?? batchSize,
        parallel,
        jobFailures: outputOptions.mode === 'message' ? 'stop' : 'continue',
        context,
        deliver: (batch) => output.deliver(batch),
        uploaded: run?.jobs.slice(),
        uploadedBefore,
        ...uploads,
      })
        .run(source)
        .catch((err: unknown) => {
          output.abort();
          throw err;
        });
      return output.finish(summary);
    }

    handleInputs(
      this,
      async (msg, context) => {
        const platform = client();
        // A file named in msg.filename (as the core file nodes do) is read as a stream.
        const source = typeof msg.filename === 'string' ? fileRows(msg.filename) : addressRows((await inputs.read(msg)).addresses);
        // An input at hand (not a stream) is stored with the run, so that the run resumes after a restart.
        const run =
          Array.isArray(source.rows) && source.rows.every((row: InputRow) => isJsonValue(row.input)) ? { batchSize, rows: source.rows, jobs: [] } : undefined;
        if (run) await context.track(storedRun(run));
        return geocode(platform, msg, source, context, run);
      },
      def,
      {
        kind: 'bulk-geocode',
        store: jobStoreFor(RED, def.server),
        resume: (stored, msg, context) => {
          const run = stored as unknown as StoredRun;
          return geocode(client(), msg, { rows: run.rows }, context, run);
        },
      },
    );
  }

  RED.nodes.registerType('svc-bulk-geocode', SvcBulkGeocode);
};
