import { stat } from 'node:fs/promises';
import type { NodeAPI, NodeDef, Node, OutputMessage } from '../lib/node-red/types';
import { msgPaths, nodeInputs } from '../lib/node-red/inputs';
import { clientFor } from '../lib/node-red/config';
import { HandlerResult, InputContext, handleInputs } from '../lib/node-red/runner';
import { isJsonValue, jobStoreFor } from '../lib/node-red/resumable';
import type { JsonObject } from '../lib/util/values';
import { AddressSource, InputRow, addressRows, fileRows } from '../lib/format/address-rows';
import { BULK_OUTPUT_MODES, BulkOutput, BulkOutputOptions, BulkOutputState } from '../lib/node-red/bulk-output';
import type { BulkJobState, BulkProtocol } from '../lib/platform/bulk';
import type { PlatformClient } from '../lib/platform/client';
import { BulkRun, FinishedBatch } from '../lib/platform/bulk-run';
import { pollingOf, readSettings } from '../lib/node-red/settings';
import type { SettingsOf } from '../lib/node-red/editor-definition';
import { readChoice } from '../lib/util/values';
import { InputError, causeOf } from '../lib/util/errors';
import { CatalogText, catalogText } from '../lib/util/catalog-text';
import { translate, translateWith } from '../lib/node-red/i18n';
import { defaults } from './defaults';
import { migrations } from './migrations';

/** `output`: message (default), parts or file, see BulkOutput; `rawCsv`: a CSV output file's cells as they are (formulas included), else written so that spreadsheets show them as text. */
type BulkGeocodeDef = NodeDef & SettingsOf<typeof defaults>;

/** A run as stored for a restart: its jobs and uploads so far, and either every input row or the input file and how far the output got. */
interface StoredRun {
  batchSize: number;
  rows?: InputRow[];
  jobs: BulkJobState[];
  /** Batches sent without a job id stored yet: after a crash each is uploaded again (no idempotency key), and its report says so. */
  uploading?: number[];
  file?: StoredFileRun;
}

/** A run from the file `msg.filename` into the output file or into parts, as far as it got. */
interface StoredFileRun {
  input: string;
  /** The input's size and modification time when the run began: a changed input is not resumed. */
  size: number;
  modifiedMs: number;
  /** The output file as the run began writing it (a redeploy that renames it does not move a run under way); absent in parts mode. */
  outputFile?: string;
  /** Batches written to the output file, or sent as parts, in order. */
  delivered: number;
  /** The output file's durable length or the parts id, and the counts so far, after the last batch delivered. */
  output?: BulkOutputState;
}

/** A run as the job store takes it: rows and job states are plain JSON (each row's input checked by `isJsonValue`). */
function storedRun(run: StoredRun): JsonObject {
  return run as unknown as JsonObject;
}

/** The input file's size and modification time; a file that cannot be read fails here, before any request. */
async function inputVersion(file: string): Promise<{ size: number; modifiedMs: number }> {
  try {
    const { size, mtimeMs } = await stat(file);
    return { size, modifiedMs: mtimeMs };
  } catch (err) {
    throw new InputError(catalogText('error.bulk.read', { cause: causeOf(err) }));
  }
}

/** svc-bulk-geocode: addresses in batches through the platform's bulk jobs, the rows in input order as one message, parts or a file. */
export = function register(RED: NodeAPI): void {
  function SvcBulkGeocode(this: Node, def: BulkGeocodeDef): void {
    RED.nodes.createNode(this, def);
    def = migrations.migrate(def);
    const warn = (text: CatalogText) => this.warn(translate(text));
    // One warning, not one per upload: the next upload gets the same status.
    let warnedUploadStatus = false;
    const onUploadStatus = (statusCode: number) => {
      if (warnedUploadStatus) return;
      warnedUploadStatus = true;
      warn(catalogText('warn.bulk.uploadStatus', { statusCode }));
    };
    const client = clientFor(RED, this, def.server, 'project');
    const inputs = nodeInputs(RED, this, def, msgPaths(defaults, ['addresses']));
    const settings = readSettings(def, defaults);
    const batchSize = settings.count('batchSize');
    const parallel = settings.count('parallel');
    const outputOptions: BulkOutputOptions = {
      mode: readChoice(def.output, BULK_OUTPUT_MODES, 'output') ?? settings.choice('output', BULK_OUTPUT_MODES),
      batchSize,
      rawFiles: def.rawFiles === true,
      outputFile: settings.text('outputFile'),
      rawCsv: def.rawCsv === true,
      partsSummary: def.partsSummary === true,
    };
    const protocol: BulkProtocol = {
      jobIdPath: settings.text('jobIdPath'),
      downloadPath: settings.text('downloadPath'),
      statusPath: settings.text('statusPath'),
      polling: pollingOf(def, defaults),
    };

    /** Runs the rows through bulk jobs into the output; with `stored` rows, each new job is stored beside them for a restart. */
    async function geocode(
      platform: PlatformClient,
      out: OutputMessage,
      source: AddressSource,
      context: InputContext,
      run: StoredRun | undefined,
    ): Promise<HandlerResult> {
      // A resumed run keeps the output it began with, whatever a redeploy changed since.
      const options: BulkOutputOptions = run?.file
        ? {
            ...outputOptions,
            batchSize: run.batchSize,
            ...(run.file.outputFile === undefined ? { mode: 'parts' } : { mode: 'file', outputFile: run.file.outputFile }),
          }
        : outputOptions;
      const output = await BulkOutput.open(out, options, context, warn, run?.file?.output).catch((err: unknown) => {
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
      const fileRun = run?.file;
      // From a file: once a batch's rows are durable in the output file, or its part is sent, the run
      // goes on from after it. A part sent before its progress is stored (a crash in between) is sent again.
      const deliver = fileRun
        ? async (batch: FinishedBatch) => {
            await output.deliver(batch);
            fileRun.output = await output.commit();
            fileRun.delivered = batch.number + 1;
            run.jobs = run.jobs.filter((job) => job.batch > batch.number);
            await context.track(storedRun(run));
          }
        : (batch: FinishedBatch) => output.deliver(batch);
      const summary = await new BulkRun({
        client: platform,
        protocol,
        batchSize: run?.batchSize ?? batchSize,
        parallel,
        jobFailures: outputOptions.mode === 'message' ? 'stop' : 'continue',
        keepFiles: outputOptions.mode === 'message' && outputOptions.rawFiles,
        context,
        deliver,
        uploaded: run?.jobs.slice(),
        uploadedBefore,
        onUploadStatus,
        ...uploads,
        delivered: fileRun?.delivered,
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
        const filename = typeof msg.filename === 'string' ? msg.filename : undefined;
        const source = filename !== undefined ? fileRows(filename) : addressRows((await inputs.read(msg)).addresses);
        // An input at hand (not a stream), or a file into a file or parts, is stored with the run, so that the run resumes after a restart.
        let run: StoredRun | undefined;
        if (Array.isArray(source.rows) && source.rows.every((row: InputRow) => isJsonValue(row.input))) run = { batchSize, rows: source.rows, jobs: [] };
        else if (filename !== undefined && outputOptions.mode !== 'message') {
          const version = await inputVersion(filename).catch((err: unknown) => {
            source.stream?.destroy();
            throw err;
          });
          const outputFile = outputOptions.mode === 'file' ? { outputFile: outputOptions.outputFile } : {};
          run = { batchSize, jobs: [], file: { input: filename, ...version, ...outputFile, delivered: 0 } };
        }
        if (run) await context.track(storedRun(run));
        return geocode(platform, msg, source, context, run).catch((err: unknown) => {
          // A stream cannot be read again: a run from one that a stop or restart cuts off is lost.
          if (!run && source.stream && context.signal.aborted) warn(catalogText('warn.bulk.streamNotResumable'));
          throw err;
        });
      },
      def,
      {
        kind: 'bulk-geocode',
        store: jobStoreFor(RED, def.server),
        resume: async (stored, msg, context) => {
          const run = stored as unknown as StoredRun;
          if (!run.file) return geocode(client(), msg, { rows: run.rows ?? [] }, context, run);
          const { size, modifiedMs } = await inputVersion(run.file.input);
          if (size !== run.file.size || modifiedMs !== run.file.modifiedMs)
            throw new InputError(catalogText('error.bulk.inputChanged', { file: run.file.input }));
          return geocode(client(), msg, fileRows(run.file.input), context, run);
        },
      },
    );
  }

  translateWith(RED);
  RED.nodes.registerType('svc-bulk-geocode', SvcBulkGeocode);
};
