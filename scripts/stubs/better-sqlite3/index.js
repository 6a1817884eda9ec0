throw new Error("better-sqlite3 is not installed in this project (see package.json overrides)");
