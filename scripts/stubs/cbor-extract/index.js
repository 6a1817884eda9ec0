throw new Error("cbor-extract is not installed in this project (see package.json overrides)");
