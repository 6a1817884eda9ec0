throw new Error("sandbox-agent is not installed in this project (see package.json overrides)");
