// Development/test entry for Piscina: loads the TypeScript tasks through tsx.
// Production uses the compiled workers/dispatch.js instead (see src/compute/worker-pool.ts).
import { register } from 'tsx/esm/api';

register();
const { default: dispatch } = await import('./dispatch.ts');
export default dispatch;
