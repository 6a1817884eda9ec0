// The benchmarks' keep-alive JSON client, for tests that make thousands of gateway calls.
export { keepAliveJson } from "../../scripts/bench/lib/keep-alive-json.mjs";
