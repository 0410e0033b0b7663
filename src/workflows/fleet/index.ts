// The limiter's own workflows entry: the small bundle the limiter's worker runs when the task
// worker's workflows are bundled from a path (plugin.ts). Workflow-safe, as src/workflows/index.ts.
export { browserAIFleetLimiter } from './limiter';
