// The worker bundles this module: workflows only, nothing that touches Node or the network.
export { browserTask } from './browser-task';
