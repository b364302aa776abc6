import type { Node, NodeAPI, NodeDef, NodeMessage, NodeMessageInFlow } from 'node-red';

/**
 * Node-RED's types as the pack uses them, in one place: node files and the glue take them from here,
 * never from the module of some helper that happens to use them too.
 */
export type { Node, NodeAPI, NodeDef, NodeMessage, NodeMessageInFlow };

/** Output messages carry whatever the node adds; Node-RED messages are open objects. */
export type OutputMessage = NodeMessageInFlow & Record<string, unknown>;
