// The worker bundles this module: workflows only, nothing that touches Node or the network.
export { browserTask } from './browser-task';
export { runSavedTask, savedTaskCreate, savedTaskGet, savedTaskList } from './saved-tasks';
