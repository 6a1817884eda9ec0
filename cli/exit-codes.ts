/** Exit codes, mapped from error codes by the registry in shared/error-codes.ts. */
export { EXIT, exitCodeFor } from "../shared/error-codes.js";
