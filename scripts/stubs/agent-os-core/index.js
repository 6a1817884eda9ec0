throw new Error("@rivet-dev/agent-os-core is not installed in this project (see package.json overrides)");
