import type { NodeAPI, NodeDef, Node, OutputMessage } from './lib/node-red/inputs';
import { message } from './lib/util/messages';
import { nodeInputs } from './lib/node-red/inputs';
import { clientFor } from './lib/node-red/config';
import { HandlerResult, InputContext, handleInputs } from './lib/node-red/runner';
import { isJsonValue, jobStoreFor } from './lib/node-red/resumable';
import type { JsonObject } from './lib/platform/job-store';
import { AddressSource, InputRow, addressRows } from './lib/format/address-rows';
import { BulkRow, bulkRow, unsentRow } from './lib/geo/result-rows';
import { bulkShapes } from './lib/geo/worldmap';
import type { BulkJobState, BulkProtocol } from './lib/platform/bulk';
import type { PlatformClient } from './lib/platform/client';
import { BulkRun, FinishedBatch } from './lib/platform/bulk-run';
import { countSetting, pollingOf, textSetting } from './lib/node-red/settings';

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
}

/** A run as stored for a restart: its batch size, every input row, and the jobs uploaded so far. */
interface StoredRun {
  batchSize: number;
  rows: InputRow[];
  jobs: BulkJobState[];
}

/** A run as the job store takes it: rows and job states are plain JSON (each row's input checked by `isJsonValue`). */
function storedRun(run: StoredRun): JsonObject {
  return run as unknown as JsonObject;
}

const DEFAULTS = { batchSize: 1000, parallel: 2, polling: { pollIntervalSec: 2, maxWaitSec: 1800, legacyPollUnitMs: 1 } };

/**
 * svc-bulk-geocode: addresses in batches through the platform's bulk jobs (upload, poll, download),
 * up to `parallel` jobs at once; one output message with a row per input address, in input order.
 */
export = function register(RED: NodeAPI): void {
  function SvcBulkGeocode(this: Node, def: BulkGeocodeDef): void {
    RED.nodes.createNode(this, def);
    const client = clientFor(RED, this, def.server, 'project');
    const inputs = nodeInputs(RED, this, def, { addresses: 'payload' });
    const batchSize = countSetting(def.batchSize, DEFAULTS.batchSize);
    const parallel = countSetting(def.parallel, DEFAULTS.parallel);
    const rawFiles = def.rawFiles === true;
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
      const rows: BulkRow[] = [];
      const files: Buffer[] = [];
      const deliver = (batch: FinishedBatch) => {
        rows.push(...outputRows(batch));
        if (rawFiles && batch.file) files.push(batch.file);
      };
      const onUpload = run
        ? async (job: BulkJobState) => {
            run.jobs.push(job);
            await context.track(storedRun(run));
          }
        : undefined;
      const summary = await new BulkRun({
        client: platform,
        protocol,
        batchSize: run?.batchSize ?? batchSize,
        parallel,
        jobFailures: 'stop',
        context,
        deliver,
        uploaded: run?.jobs.slice(),
        onUpload,
      }).run(source);
      out.payload = rows;
      out.jobs = summary.jobs;
      if (rawFiles) out.files = files;
      const failed = rows.filter((row) => row.error !== undefined).length;
      return {
        msg: out,
        statusText: failed > 0 ? message('status.rowsFailed', { count: rows.length, failed }) : message('status.rows', { count: rows.length }),
        map: (layer) => bulkShapes(rows, layer),
      };
    }

    handleInputs(
      this,
      async (msg, context) => {
        const platform = client();
        const source = addressRows((await inputs.read(msg)).addresses);
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

/** A batch's output rows: the located rows, and those not sent or not geocoded with the reason. */
function outputRows(batch: FinishedBatch): BulkRow[] {
  return batch.rows.map((row, i) => {
    if (row.address === '') return unsentRow(row, 'the address is empty; not sent');
    if (batch.error) return unsentRow(row, `the job failed: ${batch.error.message}`);
    return bulkRow(row, batch.records[i]);
  });
}
