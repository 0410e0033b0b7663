// Workflow histories as JSON (proto3 JSON: what `temporal workflow show --output json` writes),
// read and written with the protobufjs copy that built @temporalio/proto's types.
//
// Why not the SDK's `historyFromJSON` / `historyToJSON` (@temporalio/common 1.24)? They call
// protobufjs's ProtoJSON functions from @temporalio/common's own protobufjs, which check
// `type instanceof Type` against that copy. Whenever npm installs two copies of protobufjs 8 (it
// does as soon as any other package puts protobufjs 7 at the top of node_modules, as gRPC's
// proto-loader and the OpenTelemetry exporter do), the types come from @temporalio/proto's copy and
// every call throws "type must be a Type". docs/design/history-json.md has the reproduction.
import { createRequire } from 'node:module';
import { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.History;

interface ProtoJson {
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
  toJson(type: unknown, message: unknown): unknown;
}

let protoJson: ProtoJson | undefined;
/** ProtoJSON from the very protobufjs that @temporalio/proto's types were made with. */
function protoJsonOfTemporalProto(): ProtoJson {
  protoJson ??= createRequire(require.resolve('@temporalio/proto'))('protobufjs/ext/protojson') as ProtoJson;
  return protoJson;
}

const HistoryType = temporal.api.history.v1.History;

/**
 * A history from its JSON form: `{"events": [...]}` as the Temporal CLI, the UI's download and
 * `historyToJson` write it. Fields this SDK does not know (a newer server's) are ignored.
 */
export function historyFromJson(json: unknown): History {
  const events = (json as { events?: unknown } | null)?.events;
  if (!Array.isArray(events) || events.length === 0)
    throw new TypeError('not a workflow history: expected an object with a non-empty "events" array');
  return protoJsonOfTemporalProto().fromJson(HistoryType, json, { ignoreUnknownFields: true }) as History;
}

/** The JSON form of a history, as `temporal workflow show --output json` writes it. */
export function historyToJson(history: temporal.api.history.v1.IHistory): unknown {
  return protoJsonOfTemporalProto().toJson(HistoryType, HistoryType.fromObject(history));
}
